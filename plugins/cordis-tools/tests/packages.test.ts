import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import Module, { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ApprovalService } from '@cordage/registry'
import { failure, setup } from './helpers.js'

const dirs: string[] = []
const nodePath = process.env.NODE_PATH
afterEach(async () => {
  if (nodePath === undefined) delete process.env.NODE_PATH
  else process.env.NODE_PATH = nodePath
  ;(Module as unknown as { _initPaths(): void })._initPaths()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

// A third-party plugin package: importing it leaves a file beside it, its tool greets, and disposing it writes a marker.
const PLUGIN = `import { writeFileSync } from 'node:fs'
writeFileSync(new URL('./imported', import.meta.url), '')
export const name = 'demo-package'
export const inject = ['tools']
export function apply(ctx, config) {
  ctx.tools.register({
    name: 'demo_greet',
    description: 'Greets.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    output: { schema: { type: 'string' }, render: (args, value) => [{ type: 'text', text: value }] },
    execute: () => 'hello ' + (config.who ?? 'world'),
  })
  ctx.effect(() => () => writeFileSync(config.marker, 'disposed'))
}
`

async function install(root: string, name: string): Promise<string> {
  const dir = join(root, 'node_modules', name)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, type: 'module', exports: { '.': { import: './index.js' } } }))
  await writeFile(join(dir, 'index.js'), PLUGIN)
  return dir
}

async function workspace() {
  const cwd = await mkdtemp(join(tmpdir(), 'cordis-packages-'))
  dirs.push(cwd)
  const installed = await install(cwd, 'cordage-demo-plugin')
  return { cwd, installed, marker: join(cwd, 'disposed') }
}

/** An approval service that records each question and gives `answer`. */
function approver(answer: 'allow' | 'deny', asked: string[]): ApprovalService {
  return { request: async (_exec, reason) => (asked.push(reason ?? ''), answer) }
}

describe('cordis_mount { package }', () => {
  it('mounts an allowed package after approval, through a real import in the host, and unmounting disposes it', async () => {
    const { cwd, installed, marker } = await workspace()
    const asked: string[] = []
    const { ctx, call } = await setup({ packages: ['cordage-demo-plugin'], cwd }, (ctx) => void ctx.provide('approval', approver('allow', asked)))
    const mounted = await call('cordis_mount', { package: 'cordage-demo-plugin', config: { who: 'you', marker } })
    expect(mounted).toMatchObject({ isError: false, value: { id: 'dyn-1', pluginName: 'demo-package', state: 'active', provides: [], waitingFor: [] } })
    expect(asked).toEqual(['mount the installed package cordage-demo-plugin: its code runs in the host with full access'])
    expect(existsSync(join(installed, 'imported'))).toBe(true)
    expect(await call('demo_greet', {})).toMatchObject({ isError: false, value: 'hello you' })
    expect(await call('cordis_unmount', { id: 'dyn-1' })).toMatchObject({ isError: false, value: { id: 'dyn-1', pluginName: 'demo-package' } })
    expect(ctx.tools.get('demo_greet')).toBeUndefined()
    expect(readFileSync(marker, 'utf8')).toBe('disposed')
  })

  it.each([
    ['is not on the allow-list', { packages: [] }, undefined, /not on cordis-tools' packages allow-list \(empty\)/],
    ['needs approval and no approval service is loaded', { packages: ['cordage-demo-plugin'] }, undefined, /needs approval and no approval service/],
    ['was not approved', { packages: ['cordage-demo-plugin'] }, 'deny' as const, /was not approved/],
  ])('refuses a package that %s, before importing it', async (_label, config, answer, message) => {
    const { cwd, installed } = await workspace()
    const asked: string[] = []
    const { call } = await setup({ ...config, cwd }, (ctx) => void (answer && ctx.provide('approval', approver(answer, asked))))
    const refused = failure(await call('cordis_mount', { package: 'cordage-demo-plugin' }))
    expect(refused.code).toBe('MOUNT_DENIED')
    expect(refused.text).toMatch(message)
    expect(existsSync(join(installed, 'imported'))).toBe(false)
    expect(asked).toHaveLength(answer ? 1 : 0)
  })

  it("does not ask with packageApproval: 'allow'", async () => {
    const { cwd, marker } = await workspace()
    const asked: string[] = []
    const { call } = await setup(
      { packages: ['cordage-demo-plugin'], packageApproval: 'allow', cwd },
      (ctx) => void ctx.provide('approval', approver('deny', asked)),
    )
    expect(await call('cordis_mount', { package: 'cordage-demo-plugin', config: { marker } })).toMatchObject({ isError: false })
    expect(asked).toEqual([])
  })

  it('resolves from the working directory only, never through NODE_PATH', async () => {
    const { cwd } = await workspace()
    const elsewhere = await mkdtemp(join(tmpdir(), 'cordis-node-path-'))
    dirs.push(elsewhere)
    await install(elsewhere, 'cordage-elsewhere-plugin')
    process.env.NODE_PATH = join(elsewhere, 'node_modules')
    ;(Module as unknown as { _initPaths(): void })._initPaths()
    // Node's own resolution would find it there.
    expect(createRequire(join(cwd, 'x.js')).resolve('cordage-elsewhere-plugin')).toContain(elsewhere)
    const { call } = await setup({ packages: ['cordage-elsewhere-plugin'], packageApproval: 'allow', cwd })
    const refused = failure(await call('cordis_mount', { package: 'cordage-elsewhere-plugin' }))
    expect(refused).toMatchObject({ code: 'MOUNT_FAILED' })
    expect(refused.text).toContain(`package "cordage-elsewhere-plugin" is not installed in ${cwd} or a parent's node_modules`)
  })

  it('takes code or a package, not both', async () => {
    const { call } = await setup()
    for (const args of [{ code: 'return () => {}', package: 'x' }, {}]) {
      const refused = failure(await call('cordis_mount', args))
      expect(refused).toMatchObject({
        code: 'INVALID_ARGS',
        text: expect.stringContaining('cordis_mount takes either code (JavaScript returning a plugin) or package'),
      })
    }
  })
})
