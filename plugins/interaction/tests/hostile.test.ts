import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { contentText, defineTool } from '@cordage/core'
import * as McpClient from '@cordage/plugin-mcp-client'
import { createTestContext } from '@cordage/testing'
import * as Interaction from '../src/index.js'

const SERVER = join(import.meta.dirname, 'fixtures', 'bridge-server.mjs')
const dirs: string[] = []
const fibers: Array<{ dispose(): Promise<void> }> = []
afterEach(async () => {
  for (const fiber of fibers.splice(0)) await fiber.dispose()
})
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Plan mode beside a real MCP server over stdio (`br`) that writes in a fresh directory. */
async function bridged(config: Partial<Interaction.Config> = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'plan-bridge-')))
  dirs.push(dir)
  writeFileSync(join(dir, 'notes.txt'), 'original')
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(Interaction, { planMode: true, ...config })
  fibers.push(await ctx.plugin(McpClient, { name: 'br', transport: 'stdio', command: process.execPath, args: [SERVER], cwd: dir }))
  const call = (tool: string, args: object) => ctx.tools.execute({ name: `mcp__br__${tool}`, arguments: args })
  const code = async (tool: string, args: object) => {
    const result = await call(tool, args)
    return result.isError ? result.error.info?.code : 'OK'
  }
  return { ctx, dir, call, code }
}

describe('plan mode and bridged MCP tools', { timeout: 60_000 }, () => {
  it('denies bridged tools their server does not annotate readOnlyHint: true, and nothing is written', async () => {
    const { ctx, dir, call, code } = await bridged()
    const write = await call('write', { path: 'planted.txt', text: 'x' })
    expect(contentText(write.content)).toBe(
      'Error: plan mode is active: "mcp__br__write" may change things (it is not annotated readOnlyHint: true), so it is denied until the user approves a plan. Use read-only tools to explore, then present your complete plan with exit_plan_mode.',
    )
    // Annotated, but not read-only: still denied.
    expect(await code('edit', { path: 'notes.txt', text: ' appended' })).toBe('DENIED')
    expect(existsSync(join(dir, 'planted.txt'))).toBe(false)
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('original')
    const read = await call('read', { path: 'notes.txt' })
    expect(contentText(read.content)).toBe('original')
    // The denial is plan mode's: once it ends, the same calls write.
    ctx.get('planMode')!.set(false)
    expect(await code('write', { path: 'planted.txt', text: 'x' })).toBe('OK')
    expect(await code('edit', { path: 'notes.txt', text: '!' })).toBe('OK')
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('original!')
  })

  it('lets a tool the config names as read-only run, and denies one the config names as writing whatever its server claims', async () => {
    const { dir, code } = await bridged({ readOnlyTools: ['mcp__br__wr*'], writeTools: ['bash', 'mcp__br__touch'] })
    expect(await code('write', { path: 'allowed.txt', text: 'y' })).toBe('OK')
    expect(readFileSync(join(dir, 'allowed.txt'), 'utf8')).toBe('y')
    expect(await code('touch', { path: 'notes.txt' })).toBe('DENIED')
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('original')
    expect(await code('edit', { path: 'notes.txt' })).toBe('DENIED')
  })
})

describe('plan mode and native annotations', () => {
  it('denies a native tool annotated readOnlyHint: false and runs one annotated true', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(Interaction, { planMode: true })
    const ran: string[] = []
    const tool = (name: string, readOnlyHint: boolean) =>
      defineTool({
        name,
        description: name,
        parameters: Schema.object({}),
        output: { schema: Schema.const(null), render: () => [] },
        annotations: { readOnlyHint },
        execute: () => (ran.push(name), null),
      })
    ctx.tools.register(tool('sync_remote', false))
    ctx.tools.register(tool('status', true))
    expect((await ctx.tools.execute({ name: 'sync_remote', arguments: {} })).isError).toBe(true)
    expect((await ctx.tools.execute({ name: 'status', arguments: {} })).isError).toBe(false)
    expect(ran).toEqual(['status'])
  })

  it('fails the load on a misspelt config key instead of ignoring the override', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Interaction, { readonlyTools: ['mcp__*'] } as never)).rejects.toThrow(/unknown key "readonlyTools"; did you mean "readOnlyTools"/)
    expect(ctx.tools.get('exit_plan_mode')).toBeUndefined()
  })
})
