import { afterEach, describe, expect, it } from 'vitest'
import { context, propagation, trace } from '@opentelemetry/api'
import { contentText, type ToolErrorResult } from '@cordage/core'
import { createTestContext, type TestContext } from '@cordage/testing'
// The loopback OTLP receiver and the SDK setup (W3C trace-context and baggage propagators) of the telemetry plugin's tests.
import { startOtlpReceiver } from '../../otel/tests/receiver.js'
import { startSdk } from '../../otel/tests/sdk.js'
import * as plugin from '../src/index.js'
import { connectedPids, HOSTILE, httpFixture, stdioFixture, until } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const code = (result: { isError: boolean }) => (result as ToolErrorResult).error?.info?.code

/** The client connected over stdio to the hostile fixture server. */
async function hostile(): Promise<{ ctx: TestContext; events: () => string[] }> {
  const ctx = await createTestContext({ print: false })
  const fixture = stdioFixture({ name: 'hx', args: [HOSTILE] })
  const fiber = await ctx.plugin(plugin, fixture.config)
  cleanups.push(() => fiber.dispose())
  return { ctx, events: fixture.events }
}

describe('a hostile MCP server', () => {
  it('cannot make the client run its regular expressions: schemas with pattern are checked by the server only', async () => {
    const { ctx } = await hostile()
    const definition = ctx.tools.get('mcp__hx__redos')!
    // Locally, "^(a+)+$" against "aaa…a!" backtracks 2^n times: with both the schema and the value the
    // server's, it could stall the process for as long as it liked.
    expect(definition.parameters).toEqual({ type: 'object' })
    expect(definition.output.schema.properties!.structuredContent).toEqual({ type: 'object' })
    expect(definition.description).toContain('"pattern":"^(a+)+$"')
    const warnings = ctx.logs.filter((record) => record.type === 'warn').map((record) => record.text)
    expect(warnings.some((text) => text.includes('tool "redos": inputSchema not enforced locally') && text.includes('/properties/code/pattern'))).toBe(true)
    const result = await ctx.tools.execute({ name: 'mcp__hx__redos', arguments: { code: `${'a'.repeat(24)}!` } })
    expect(result).toMatchObject({ isError: false, value: { structuredContent: { code: `${'a'.repeat(24)}!` } } })
  })

  it('a result that is not a CallToolResult fails that call with MCP_PROTOCOL_ERROR; the connection and the calls beside it carry on', async () => {
    const { ctx, events } = await hostile()
    const beside = ctx.tools.execute({ name: 'mcp__hx__slow', arguments: { ms: 300 } })
    await until(() => events().includes('call slow'), 5_000, 'the call beside to reach the server')
    const result = await ctx.tools.execute({ name: 'mcp__hx__malformed', arguments: {} })
    expect(code(result)).toBe('MCP_PROTOCOL_ERROR')
    expect(contentText(result.content)).toContain('the MCP server "hx" sent an invalid result')
    expect(contentText((await beside).content)).toBe('slept 300')
    expect(connectedPids(ctx)).toHaveLength(1)
    expect(ctx.tools.get('mcp__hx__slow')).toBeDefined()
  })

  it.each([
    ['an SSE event', false],
    ['a JSON body', true],
  ])(
    'over HTTP, %s that grows past 10 MiB drops the connection, as over stdio, instead of being buffered without bound',
    async (_kind, json) => {
      const server = await httpFixture(0, HOSTILE)
      cleanups.push(() => server.child.kill('SIGKILL'))
      const ctx = await createTestContext({ print: false })
      const fiber = await ctx.plugin(plugin, {
        name: 'hx',
        transport: 'http',
        url: server.url,
        timeoutMs: 15_000,
        reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      })
      cleanups.push(() => fiber.dispose())
      const result = await ctx.tools.execute({ name: 'mcp__hx__endless', arguments: { json } })
      expect(code(result)).toBe('MCP_DISCONNECTED')
      // The client hung up soon after the limit: the server had 256 MiB to send.
      await until(() => server.events().some((line) => line.startsWith('endless closed')), 5_000, 'the server to see the client hang up')
      const sent = Number(/after (\d+) bytes/.exec(server.events().find((line) => line.startsWith('endless closed'))!)![1])
      expect(sent).toBeLessThan(64 * 1024 * 1024)
      expect(ctx.logs.some((record) => record.type === 'warn' && record.text.includes('MCP_FRAME_TOO_LARGE'))).toBe(true)
      // Reconnected, and served as before.
      await until(() => ctx.tools.get('mcp__hx__slow') !== undefined, 10_000, 'reconnection')
      expect(contentText((await ctx.tools.execute({ name: 'mcp__hx__slow', arguments: { ms: 1 } })).content)).toBe('slept 1')
    },
    30_000,
  )

  it('a server that floods tools/list_changed gets its tools listed a bounded number of times, and the latest list still arrives', async () => {
    const { ctx, events } = await hostile()
    const lists = () => events().filter((line) => line === 'list').length
    const before = lists()
    // A notification every millisecond for 2 s: about 2 000 of them.
    expect(contentText((await ctx.tools.execute({ name: 'mcp__hx__flood', arguments: { ms: 2000 } })).content)).toBe('flooded')
    // The last notification is still acted on: one list after the flood ended (a 5 s hang bound).
    const afterFlood = events().indexOf('flood over')
    await until(() => events().slice(afterFlood).includes('list'), 5_000, 'a list after the flood')
    // At most one pass per 250 ms while it lasts, the pass in flight and the last one.
    expect(lists() - before).toBeLessThanOrEqual(2000 / 250 + 3)
    expect(ctx.tools.get('mcp__hx__slow')).toBeDefined()
  })

  it("receives the caller's W3C trace context in _meta, never its baggage", async () => {
    const receiver = await startOtlpReceiver()
    cleanups.push(() => receiver.close())
    const sdk = startSdk(receiver.url, 'json')
    cleanups.push(() => sdk.shutdown())
    const { ctx } = await hostile()
    const baggage = propagation.createBaggage({ 'user.email': { value: 'ada@example.com' }, tenant: { value: 'acme' } })
    const { result, traceId } = await trace.getTracer('test').startActiveSpan('caller', async (span) => {
      const withBaggage = propagation.setBaggage(context.active(), baggage)
      const result = await context.with(withBaggage, () => ctx.tools.execute({ name: 'mcp__hx__meta', arguments: {} }))
      span.end()
      return { result, traceId: span.spanContext().traceId }
    })
    const meta = JSON.parse(contentText(result.content)) as Record<string, string>
    expect(Object.keys(meta)).toEqual(['traceparent'])
    expect(meta.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  })
})
