import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import otel from '../src/index.js'
import { startOtlpReceiver } from './receiver.js'
import { startSdk } from './sdk.js'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const echo = defineTool({
  name: 'echo',
  description: 'Echoes text.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.object({ text: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.text }] },
  execute: (args) => ({ text: args.text }),
})

describe('names and ids chosen by a caller', () => {
  // An MCP client of `cordage mcp serve` names the tool and the request id (the call id `mcp_<id>`); a
  // model may invent tool names. Neither is bounded by the registry when the tool does not exist.
  it('a flood of unknown tool names is counted under one name, bounded in spans, and leaves the real tools counted', async () => {
    const receiver = await startOtlpReceiver()
    cleanups.push(() => receiver.close())
    const sdk = startSdk(receiver.url, 'json')
    cleanups.push(() => sdk.shutdown())
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    await ctx.plugin(otel, {})
    for (let index = 0; index < 1_100; index++) {
      const result = await ctx.tools.execute({ name: `${'x'.repeat(5_000)}${index}`, arguments: {} })
      expect(result.isError).toBe(true)
    }
    await ctx.tools.execute({ name: 'echo', arguments: { text: 'hi' }, callId: `mcp_${'7'.repeat(100_000)}` })
    await sdk.flush()
    const calls = receiver.points
      .filter((point) => point.metric === 'cordage.tool.calls')
      .map((point) => [point.attributes['gen_ai.tool.name'], point.attributes['cordage.tool.outcome'], point.value])
    expect(calls).toEqual([
      ['(unknown)', 'error', 1_100],
      ['echo', 'success', 1],
    ])
    expect(receiver.spans).toHaveLength(1_101)
    for (const span of receiver.spans) {
      expect(span.name.length).toBeLessThan(200)
      expect(String(span.attributes['gen_ai.tool.name']).length).toBeLessThan(200)
      expect(String(span.attributes['gen_ai.tool.call.id']).length).toBeLessThan(400)
    }
    const unknown = receiver.spans.find((span) => span.attributes['error.type'] === 'UNKNOWN_TOOL')!
    expect(unknown.name).toMatch(/^execute_tool x{64}… \(\d+ more characters not recorded\)$/)
    expect(receiver.spans.find((span) => span.name === 'execute_tool echo')!.attributes['gen_ai.tool.call.id']).toMatch(
      /^mcp_7{252}… \(99748 more characters not recorded\)$/,
    )
  })
})
