import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { Output } from '../src/output.js'
import { reloadConfig, watchConfig, type ReloadReport } from '../src/reload.js'
import { startRuntime, type Runtime } from '../src/runtime.js'
import { echoPlugin, project } from './helpers.js'

// A second plugin: `fail: true` makes its apply throw; every apply and dispose is counted on globalThis.
const countedPlugin = `
export const name = 'counted'
export const inject = ['tools']
export function apply(ctx, config) {
  if (config?.fail) throw new Error('refusing to start')
  globalThis.countedApplies = (globalThis.countedApplies ?? 0) + 1
  ctx.effect(() => () => { globalThis.countedDisposes = (globalThis.countedDisposes ?? 0) + 1 })
  ctx.tools.register({
    name: 'counted', description: 'Says its label.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    output: { schema: { type: 'string' }, render: (args, value) => [{ type: 'text', text: value }] },
    execute: () => config?.label ?? 'none',
  })
}
`

const runtimes: Runtime[] = []
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.dispose()
})

function setup(yml: string): { dir: string; start: () => Promise<{ runtime: Runtime; stderr: () => string }> } {
  const dir = project({ 'cordage.yml': yml, 'echo.mjs': echoPlugin, 'counted.mjs': countedPlugin })
  return {
    dir,
    async start() {
      const err = new PassThrough()
      let text = ''
      err.on('data', (chunk) => (text += chunk))
      const runtime = await startRuntime({ cwd: dir, output: new Output(new PassThrough(), err, { NO_COLOR: '1' }) })
      runtimes.push(runtime)
      return { runtime, stderr: () => text }
    },
  }
}

async function call(runtime: Runtime, name: string, args: object = {}): Promise<string> {
  return contentText((await runtime.ctx.get('tools')!.execute({ name, arguments: args })).content)
}
const names = (runtime: Runtime) =>
  runtime.ctx
    .get('tools')!
    .list()
    .map((tool) => tool.name)
    .sort()

describe('reloadConfig', () => {
  it('re-applies an edited entry with its new config and leaves the others running', async () => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: { prefix: old }\n  ./counted.mjs: { label: a }\n')
    const { runtime } = await start()
    const counted = runtime.loaded[1].fiber
    expect(await call(runtime, 'echo', { text: 'hi' })).toBe('old: hi')
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: new }\n  ./counted.mjs: { label: a }\n')
    expect(await reloadConfig(runtime, { cwd: dir })).toEqual({ loaded: [], reloaded: ['./echo.mjs'], unloaded: [] })
    expect(await call(runtime, 'echo', { text: 'hi' })).toBe('new: hi')
    expect(runtime.loaded[1].fiber).toBe(counted)
    // Unchanged text: nothing stops.
    expect(await reloadConfig(runtime, { cwd: dir })).toEqual({ loaded: [], reloaded: [], unloaded: [] })
  })

  it('loads an added entry and unloads a removed one, to quiescence', async () => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: {}\n')
    const { runtime } = await start()
    const disposes = (globalThis as any).countedDisposes ?? 0
    const tools = runtime.ctx.get('tools')!
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: {}\n  ./counted.mjs: { label: b }\n')
    expect(await reloadConfig(runtime, { cwd: dir })).toEqual({ loaded: ['./counted.mjs'], reloaded: [], unloaded: [] })
    expect(await call(runtime, 'counted')).toBe('b')
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./counted.mjs: { label: b }\n')
    expect(await reloadConfig(runtime, { cwd: dir })).toEqual({ loaded: [], reloaded: [], unloaded: ['./echo.mjs'] })
    expect(names(runtime)).toEqual(['counted'])
    expect(runtime.plugins).toEqual(['./counted.mjs'])
    await runtime.dispose()
    expect(tools.list()).toEqual([])
    expect((globalThis as any).countedDisposes).toBe(disposes + 1)
  })

  it.each([
    ['not YAML', 'plugins: [unclosed\n', 'cordage.yml: not valid YAML'],
    ['a key typo', 'plugns:\n  ./echo.mjs: { prefix: new }\n', 'unknown key "plugns"; did you mean "plugins"?'],
    [
      'a bad value',
      'plugins:\n  ./echo.mjs: { prefix: 42 }\n  ./counted.mjs: { label: a }\n',
      'cordage.yml: plugin ./echo.mjs: prefix: expected string but got 42',
    ],
    ['an unknown plugin', 'plugins:\n  ./echo.mjs: { prefix: new }\n  no-such-plugin: {}\n', 'cannot find plugin "no-such-plugin"'],
    [
      'a plugin that fails to start',
      'plugins:\n  ./echo.mjs: { prefix: new }\n  ./counted.mjs: { fail: true }\n',
      'plugin ./counted.mjs: failed to start: refusing to start',
    ],
  ])('rejects %s and keeps the running composition', async (_title, edit, message) => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: { prefix: old }\n  ./counted.mjs: { label: a }\n')
    const { runtime } = await start()
    const tools = runtime.ctx.get('tools')!
    writeFileSync(join(dir, 'cordage.yml'), edit)
    await expect(reloadConfig(runtime, { cwd: dir })).rejects.toThrow(message)
    expect(names(runtime)).toEqual(['counted', 'echo'])
    expect(await call(runtime, 'echo', { text: 'hi' })).toBe('old: hi')
    expect(await call(runtime, 'counted')).toBe('a')
    expect(runtime.loaded.map((entry) => [entry.spec, entry.config])).toEqual([
      ['./echo.mjs', { prefix: 'old' }],
      ['./counted.mjs', { label: 'a' }],
    ])
    // The restored composition is fully owned by the runtime: disposing it removes everything.
    await runtime.dispose()
    expect(tools.list()).toEqual([])
  })

  it('rejects a removed config file and keeps the running composition', async () => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: { prefix: old }\n')
    const { runtime } = await start()
    rmSync(join(dir, 'cordage.yml'))
    await expect(reloadConfig(runtime, { cwd: dir })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: 'cordage.yml: the file was removed' })
    expect(await call(runtime, 'echo', { text: 'hi' })).toBe('old: hi')
  })
})

describe('watchConfig', () => {
  function watched(runtime: Runtime, dir: string, busy?: () => Promise<unknown> | undefined) {
    const outcomes: Array<ReloadReport | Error> = []
    let notify = () => {}
    const watcher = watchConfig(runtime, {
      cwd: dir,
      output: new Output(new PassThrough(), new PassThrough(), { NO_COLOR: '1' }),
      debounceMs: 20,
      busy,
      onReload: (outcome) => (outcomes.push(outcome), notify()),
    })
    const next = (count: number) =>
      new Promise<void>((resolve) => {
        notify = () => outcomes.length >= count && resolve()
        notify()
      })
    return { watcher, outcomes, next }
  }

  it('reloads on file edits (including a replaced file), reports a bad edit and stops when closed', async () => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: { prefix: one }\n')
    const { runtime } = await start()
    const { watcher, outcomes, next } = watched(runtime, dir)
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: two }\n')
    await next(1)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('two: x')
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: 2 }\n')
    await next(2)
    expect(outcomes[1]).toBeInstanceOf(Error)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('two: x')
    // Editors that save by rename replace the file; the directory watch still sees it.
    writeFileSync(join(dir, 'cordage.yml.tmp'), 'plugins:\n  ./echo.mjs: { prefix: three }\n')
    const { renameSync } = await import('node:fs')
    renameSync(join(dir, 'cordage.yml.tmp'), join(dir, 'cordage.yml'))
    await next(3)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('three: x')
    watcher.close()
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: four }\n')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(outcomes).toHaveLength(3)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('three: x')
  })

  it('waits for the turn in progress before it changes anything', async () => {
    const { dir, start } = setup('plugins:\n  ./echo.mjs: { prefix: one }\n')
    const { runtime } = await start()
    let finish!: () => void
    let turn: Promise<void> | undefined = new Promise<void>((resolve) => (finish = resolve))
    const { watcher, outcomes, next } = watched(runtime, dir, () => turn)
    writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: two }\n')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(outcomes).toHaveLength(0)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('one: x')
    finish()
    turn = undefined
    await next(1)
    expect(await call(runtime, 'echo', { text: 'x' })).toBe('two: x')
    watcher.close()
  })
})
