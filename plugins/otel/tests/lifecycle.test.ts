import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { Agent } from '@cordage/agent'
import { defineTool } from '@cordage/core'
import { listenerCount } from '@cordage/registry'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import otel from '../src/index.js'
import { startOtlpReceiver } from './receiver.js'
import { startSdk, type TestSdk } from './sdk.js'

const EVENTS = ['tools/execute', 'tools/result', 'agent/run', 'agent/request', 'agent/child', 'agent/compact'] as const

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function receiverAndSdk(): Promise<{ sdk: TestSdk; receiver: Awaited<ReturnType<typeof startOtlpReceiver>> }> {
  const receiver = await startOtlpReceiver()
  cleanups.push(() => receiver.close())
  const sdk = startSdk(receiver.url, 'protobuf')
  cleanups.push(() => sdk.shutdown())
  return { sdk, receiver }
}

/** A tool whose body waits until released (or aborted). */
function gate() {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let entered!: () => void
  const inside = new Promise<void>((resolve) => (entered = resolve))
  const tool = defineTool({
    name: 'wait',
    description: 'Waits.',
    parameters: Schema.object({}),
    output: { schema: Schema.object({}), render: () => [{ type: 'text', text: 'done' }] },
    async execute() {
      entered()
      await released
      return {}
    },
  })
  return { tool, release, inside }
}

describe('loading and unloading', () => {
  it('unloading the plugin leaves no listener behind', async () => {
    await receiverAndSdk()
    const ctx = await createTestContext()
    const before = EVENTS.map((event) => listenerCount(ctx, event))
    const fiber = await ctx.plugin(otel, {})
    expect(EVENTS.map((event) => listenerCount(ctx, event))).toEqual(before.map((count) => count + 1))
    await fiber.dispose()
    expect(EVENTS.map((event) => listenerCount(ctx, event))).toEqual(before)
  })

  it('with no provider registered it stays off the tool call path, and joins it at the first run after one is registered', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(otel, {})
    expect(listenerCount(ctx, 'tools/execute')).toBe(0)
    expect(listenerCount(ctx, 'tools/result')).toBe(0)
    const { sdk, receiver } = await receiverAndSdk()
    await ctx.plugin(ScriptedModel, { id: 'scripted:late', turns: [{ text: 'hello' }] })
    await new Agent(ctx, { agent: 'late' }).run('hi')
    expect(listenerCount(ctx, 'tools/execute')).toBe(1)
    expect(listenerCount(ctx, 'tools/result')).toBe(1)
    await sdk.flush()
    expect(receiver.spans.map((span) => span.name).sort()).toEqual(['chat late', 'invoke_agent cordage'])
  })

  it('a call in flight when the plugin unloads still gets its span, ended and marked as cut short', async () => {
    const { sdk, receiver } = await receiverAndSdk()
    const ctx = await createTestContext()
    const { tool, release, inside } = gate()
    ctx.tools.register(tool)
    const fiber = await ctx.plugin(otel, {})
    const call = ctx.tools.execute({ name: 'wait', arguments: {} })
    await inside
    await fiber.dispose()
    release()
    expect((await call).isError).toBe(false)
    await sdk.flush()
    expect(receiver.spans).toHaveLength(1)
    expect(receiver.spans[0]).toMatchObject({ name: 'execute_tool wait', attributes: { 'error.type': 'UNLOADED' }, status: { code: 2 } })
  })

  it('rejects a bad config naming the plugin and the key', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(otel, { captureContents: true } as never)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/otel.*captureContents/s),
    })
    await expect(ctx.plugin(otel, { protocol: 'grpc' } as never)).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/protocol/) })
    await expect(ctx.plugin(otel, { maxContentLength: -1 } as never)).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
  })
})

describe('compaction', () => {
  it('is an event on the run span, with the sizes before and after', async () => {
    const { sdk, receiver } = await receiverAndSdk()
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(
      defineTool({
        name: 'blob',
        description: 'A large result.',
        parameters: Schema.object({ index: Schema.natural() }),
        output: { schema: Schema.object({ text: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.text }] },
        execute: (args) => ({ text: `${args.index}`.repeat(3000) }),
      }),
    )
    await ctx.plugin(otel, {})
    const turns = Array.from({ length: 5 }, (_, index) => ({ toolCalls: [{ name: 'blob', arguments: { index } }] }))
    const model = new ScriptedModel(ctx, { id: 'scripted:small', turns: [...turns, { text: 'finished' }], contextWindow: 3000 })
    const result = await new Agent(ctx, { model, agent: 'compacting' }).run('go')
    expect(result.stopReason).toBe('completed')
    await sdk.flush()
    const run = receiver.spans.find((span) => span.name === 'invoke_agent cordage')!
    const compactions = run.events.filter((event) => event.name === 'cordage.compaction')
    expect(compactions.length).toBeGreaterThan(0)
    expect(compactions[0]!.attributes).toMatchObject({ 'cordage.compaction.reason': 'auto' })
    expect(Number(compactions[0]!.attributes['cordage.compaction.tokens_before'])).toBeGreaterThan(
      Number(compactions[0]!.attributes['cordage.compaction.tokens_after']),
    )
  })
})
