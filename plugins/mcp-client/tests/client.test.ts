import { getEventListeners } from 'node:events'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { contentText, type ToolErrorResult } from '@cordage/core'
import { createTestContext, processAlive, testToolContract, type TestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { alive, connectedPids, stdioFixture, until } from './helpers.js'

testToolContract(plugin, {
  config: () => stdioFixture().config,
  cases: [
    { tool: 'mcp__fx__echo', arguments: { text: 'hi' } },
    { tool: 'mcp__fx__weather', arguments: { city: 'Oslo' } },
    { tool: 'mcp__fx__weather', arguments: { city: 'Oslo', valid: false }, expect: 'error' },
    { tool: 'mcp__fx__fail', arguments: {}, expect: 'error' },
    { tool: 'mcp__fx__media', arguments: {} },
  ],
})

const fibers: Array<{ dispose(): Promise<void> }> = []
async function load(
  overrides: Partial<plugin.McpClientOptions> = {},
): Promise<{ ctx: TestContext; fiber: { dispose(): Promise<void> }; events: () => string[] }> {
  const ctx = await createTestContext({ print: false })
  const fixture = stdioFixture(overrides)
  const fiber = await ctx.plugin(plugin, fixture.config)
  fibers.push(fiber)
  return { ctx, fiber, events: fixture.events }
}
afterEach(async () => {
  for (const fiber of fibers.splice(0)) await fiber.dispose()
})

const code = (result: { isError: boolean }) => (result as ToolErrorResult).error?.info?.code

describe('mcp-client over stdio', () => {
  it('registers every server tool as mcp__<server>__<tool>, normalising and disambiguating names', async () => {
    const { ctx } = await load()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual([
      'mcp__fx__add_tool',
      'mcp__fx__crash',
      'mcp__fx__dotted_name',
      'mcp__fx__dotted_name_4c738d92',
      'mcp__fx__echo',
      'mcp__fx__fail',
      'mcp__fx__media',
      'mcp__fx__odd_schema',
      'mcp__fx__remove_tool',
      'mcp__fx__slow',
      'mcp__fx__weather',
    ])
    expect(contentText((await ctx.tools.execute({ name: 'mcp__fx__dotted_name', arguments: {} })).content)).toBe('underscored')
    expect(contentText((await ctx.tools.execute({ name: 'mcp__fx__dotted_name_4c738d92', arguments: {} })).content)).toBe('dotted')
  })

  it('returns McpResult values and requires structuredContent when an outputSchema is advertised', async () => {
    const { ctx } = await load()
    const result = await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'hi' } })
    expect(result).toMatchObject({ isError: false, value: { content: [{ type: 'text', text: 'hi' }], structuredContent: { text: 'hi' } } })
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }])
    const schema = ctx.tools.get('mcp__fx__echo')!.output.schema
    expect(schema.required).toEqual(['content', 'structuredContent'])
    expect(ctx.tools.get('mcp__fx__echo')!.concurrency).toBe('parallel')
    expect(ctx.tools.get('mcp__fx__fail')!.output.schema.required).toEqual(['content'])
  })

  it("carries the server's tool annotations over MCP's defaults, so an unannotated tool is not read-only", async () => {
    const { ctx } = await load()
    const listed = new Map(ctx.tools.list().map((tool) => [tool.name, tool.annotations]))
    expect(listed.get('mcp__fx__echo')).toEqual({ readOnlyHint: true, destructiveHint: true, idempotentHint: true, openWorldHint: true })
    expect(listed.get('mcp__fx__fail')).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true })
    expect(ctx.tools.get('mcp__fx__fail')!.concurrency).toBe('exclusive')
  })

  it('enforces a supported outputSchema on structuredContent', async () => {
    const { ctx } = await load()
    const valid = await ctx.tools.execute({ name: 'mcp__fx__weather', arguments: { city: 'Oslo' } })
    expect(valid.isError === false && valid.value).toEqual({
      content: [{ type: 'text', text: '{"city":"Oslo","celsius":21.5}' }],
      structuredContent: { city: 'Oslo', celsius: 21.5 },
    })
    const invalid = await ctx.tools.execute({ name: 'mcp__fx__weather', arguments: { city: 'Oslo', valid: false } })
    expect(code(invalid)).toBe('INVALID_TOOL_OUTPUT')
    expect(contentText(invalid.content)).toContain('/structuredContent/celsius')
  })

  it('falls back to permissive schemas for unsupported ones, says so in the description and logs why', async () => {
    const { ctx } = await load()
    const definition = ctx.tools.get('mcp__fx__odd_schema')!
    expect(definition.parameters).toEqual({ type: 'object' })
    expect(definition.description).toContain('Arguments (JSON Schema, checked by the server): {"type":"object"')
    expect(definition.output.schema.properties!.structuredContent).toEqual({ type: 'object' })
    const warnings = ctx.logs
      .filter((record) => record.type === 'warn')
      .map((record) => record.text)
      .join('\n')
    expect(warnings).toContain('inputSchema not enforced locally')
    expect(warnings).toContain('dependentRequired')
    expect(warnings).toContain('outputSchema not enforced')
    expect(warnings).toContain('unevaluatedProperties')
    const result = await ctx.tools.execute({ name: 'mcp__fx__odd_schema', arguments: { n: 2 } })
    expect(result.isError === false && result.value).toEqual({ content: [{ type: 'text', text: 'n=2' }], structuredContent: { n: 2, extra: true } })
  })

  it('turns MCP isError into a failed result carrying the server text', async () => {
    const { ctx } = await load()
    const result = await ctx.tools.execute({ name: 'mcp__fx__fail', arguments: {} })
    expect(result).toMatchObject({ isError: true, error: { message: 'the disk is on fire', info: { name: 'McpToolError', code: 'MCP_TOOL_ERROR' } } })
    expect(result.content).toEqual([{ type: 'text', text: 'Error: the disk is on fire' }])
  })

  it('maps image, audio, resource and resource_link content to content blocks', async () => {
    const { ctx } = await load()
    const result = await ctx.tools.execute({ name: 'mcp__fx__media', arguments: {} })
    expect(result.content).toMatchInlineSnapshot(`
      [
        {
          "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "mimeType": "image/png",
          "type": "image",
        },
        {
          "text": "[audio audio/wav, 3 bytes, not shown]",
          "type": "text",
        },
        {
          "mimeType": "text/plain",
          "text": "hello notes",
          "type": "resource",
          "uri": "file:///notes.txt",
        },
        {
          "text": "[resource link] big.bin <file:///big.bin> (application/octet-stream) - a large file",
          "type": "text",
        },
      ]
    `)
  })

  it('rejects arguments that break a supported inputSchema before contacting the server', async () => {
    const { ctx, events } = await load()
    const result = await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 5 } })
    expect(code(result)).toBe('INVALID_ARGS')
    expect(contentText(result.content)).toContain('/text')
    expect(events().filter((line) => line.startsWith('call'))).toEqual([])
  })

  it.each([
    ['content', 'mcp__fx__echo', ['hi']],
    ['structured', 'mcp__fx__echo', ['{"text":"hi"}']],
    ['both', 'mcp__fx__echo', ['hi', '{"text":"hi"}']],
    ['both', 'mcp__fx__weather', ['{"city":"Oslo","celsius":21.5}']],
    ['structured', 'mcp__fx__fail', ['Error: the disk is on fire']],
  ] as const)('modelSees %s: %s renders %j', async (modelSees, tool, texts) => {
    const { ctx } = await load({ modelSees })
    const result = await ctx.tools.execute({ name: tool, arguments: { text: 'hi', city: 'Oslo' } })
    expect(result.content.map((block) => (block.type === 'text' ? block.text : block.type))).toEqual(texts)
  })

  it('times a call out at timeoutMs and sends notifications/cancelled to the server', async () => {
    const { ctx, events } = await load({ timeoutMs: 200 })
    const result = await ctx.tools.execute({ name: 'mcp__fx__slow', arguments: { ms: 10_000 } })
    expect(code(result)).toBe('TOOL_TIMEOUT')
    await until(() => events().some((line) => line.startsWith('cancelled')), 5_000, 'the server to see the cancellation')
  })

  it('cancels a call when the caller aborts, and the server sees the cancellation', async () => {
    const { ctx, events } = await load()
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const result = await ctx.tools.execute({ name: 'mcp__fx__slow', arguments: { ms: 10_000 }, signal: controller.signal })
    expect(code(result)).toBe('ABORTED')
    await until(() => events().some((line) => line.startsWith('cancelled')), 5_000, 'the server to see the cancellation')
    const after = await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'still here' } })
    expect(contentText(after.content)).toBe('still here')
  })

  it('one caller signal cancels every call in flight under it, and its listener does not grow with calls', async () => {
    const { ctx, events } = await load()
    const controller = new AbortController()
    await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'first' }, signal: controller.signal })
    // The registry's and the connection's: each follows the signal with one listener for its whole life,
    // so calls that come and go add none (a listener per call would leak on a long-lived signal).
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(2)
    for (let i = 0; i < 5; i++) await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: `${i}` }, signal: controller.signal })
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(2)
    const calls = [1, 2].map(() => ctx.tools.execute({ name: 'mcp__fx__slow', arguments: { ms: 10_000 }, signal: controller.signal }))
    await until(() => events().filter((line) => line.startsWith('call slow')).length === 2, 5_000, 'both calls to reach the server')
    controller.abort()
    expect((await Promise.all(calls)).map(code)).toEqual(['ABORTED', 'ABORTED'])
    await until(() => events().filter((line) => line.startsWith('cancelled')).length === 2, 5_000, 'the server to see both cancellations')
  })

  it('fails a call in flight when the server crashes, unregisters its tools, then reconnects and re-registers them', async () => {
    const { ctx } = await load()
    const [firstPid] = connectedPids(ctx)
    const seen: string[][] = []
    ctx.on('tools/changed', () => void seen.push(ctx.tools.list().map((tool) => tool.name)))
    const result = await ctx.tools.execute({ name: 'mcp__fx__crash', arguments: {} })
    expect(code(result)).toBe('MCP_DISCONNECTED')
    expect(contentText(result.content)).toContain('disconnected during the call')
    await until(() => connectedPids(ctx).length === 2 && ctx.tools.get('mcp__fx__echo') !== undefined, 10_000, 'reconnection')
    expect(seen.some((names) => names.length === 0)).toBe(true)
    const [, secondPid] = connectedPids(ctx)
    expect(secondPid).not.toBe(firstPid)
    expect(alive(firstPid!)).toBe(false)
    const again = await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'back' } })
    expect(contentText(again.content)).toBe('back')
  })

  it('follows tools/list_changed: registers added tools and unregisters removed ones', async () => {
    const { ctx } = await load()
    expect(ctx.tools.get('mcp__fx__extra')).toBeUndefined()
    await ctx.tools.execute({ name: 'mcp__fx__add_tool', arguments: {} })
    await until(() => ctx.tools.get('mcp__fx__extra') !== undefined, 5_000, 'the added tool')
    expect(contentText((await ctx.tools.execute({ name: 'mcp__fx__extra', arguments: {} })).content)).toBe('extra!')
    await ctx.tools.execute({ name: 'mcp__fx__remove_tool', arguments: {} })
    await until(() => ctx.tools.get('mcp__fx__extra') === undefined, 5_000, 'the removed tool')
    expect(ctx.tools.get('mcp__fx__echo')).toBeDefined()
  })

  it('unloading closes the transport, kills the child process, unregisters every tool and leaves no listener on a caller', async () => {
    const { ctx, fiber } = await load()
    const [pid] = connectedPids(ctx)
    expect(alive(pid!)).toBe(true)
    const caller = new AbortController()
    await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'hi' }, signal: caller.signal })
    expect(getEventListeners(caller.signal, 'abort'), "the registry's and the connection's").toHaveLength(2)
    await fiber.dispose()
    expect(getEventListeners(caller.signal, 'abort'), "only the registry's stays, until the registry unloads").toHaveLength(1)
    expect(ctx.tools.list()).toEqual([])
    await until(() => !alive(pid!), 5_000, `pid ${pid} to exit`)
  })

  it('unloading also ends what a stdio server left behind: a daemon that left its session and lost its parent', async () => {
    const daemonFile = join(mkdtempSync(join(tmpdir(), 'mcp-daemon-')), 'daemon.pid')
    const { fiber } = await load({ env: { DAEMON_PID: daemonFile } } as any)
    await until(() => existsSync(daemonFile) && readFileSync(daemonFile, 'utf8').trim() !== '', 10_000, 'the daemon pid')
    const daemon = Number(readFileSync(daemonFile, 'utf8'))
    expect(processAlive(daemon)).toBe(true)
    await fiber.dispose()
    // Gone once dispose has settled: the SDK only ever signals the server process itself.
    expect(processAlive(daemon)).toBe(false)
  })

  it('loads with an unreachable server, registers nothing, retries, and stops retrying on unload', async () => {
    const { ctx, fiber } = await load({ command: '/nonexistent/mcp-server', args: [] } as any)
    expect(ctx.tools.list()).toEqual([])
    await until(() => ctx.logs.filter((record) => record.text.includes('cannot connect')).length >= 2, 5_000, 'a retry')
    await fiber.dispose()
    const attempts = ctx.logs.filter((record) => record.text.includes('cannot connect')).length
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(ctx.logs.filter((record) => record.text.includes('cannot connect')).length).toBe(attempts)
  })

  it('skips tools whose names are already taken by another plugin, without disturbing that plugin', async () => {
    const { ctx } = await load()
    const before = ctx.tools.get('mcp__fx__echo')
    const second = await ctx.plugin(plugin, stdioFixture().config)
    expect(ctx.tools.get('mcp__fx__echo')).toBe(before)
    expect(ctx.logs.some((record) => record.type === 'warn' && record.text.includes('not registered as mcp__fx__echo'))).toBe(true)
    await second.dispose()
    expect(ctx.tools.get('mcp__fx__echo')).toBe(before)
    expect(contentText((await ctx.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'first' } })).content)).toBe('first')
  })

  it.each([
    [{ name: 'x', transport: 'stdio' }, 'command'],
    [{ name: 'x', transport: 'http' }, 'url'],
    [{ name: '', transport: 'stdio', command: 'node' }, 'name'],
    [{ name: 'x', transport: 'ws', url: 'ws://127.0.0.1' }, 'transport'],
  ])('rejects an invalid config at load: %j (%s)', async (config, field) => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(plugin, config as any)).rejects.toThrow(field)
    expect(ctx.tools.list()).toEqual([])
  })
})
