import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel, ScriptExhaustedError } from '@cordage/testing'
import type { CompletionRequest, Message, ModelEvent } from '../src/index.js'

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = []
  for await (const event of stream) events.push(event)
  return events
}

describe('ScriptedModel', () => {
  it('streams scripted deltas and calls, records deep copies of requests, and answers from a function of the request', async () => {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(ScriptedModel, {
      turns: [
        {
          text: ['a', 'b'],
          toolCalls: [
            { name: 'read', arguments: { path: 'x' } },
            { id: 'mine', name: 'raw', arguments: '{not json' },
          ],
          usage: { inputTokens: 3, outputTokens: 4 },
        },
        (request) => ({ text: `saw ${request.messages.length} messages` }),
      ],
    })
    const model = ctx.get('model') as unknown as ScriptedModel
    const messages: Message[] = [{ role: 'user', content: 'hi' }]
    const request: CompletionRequest = { messages, tools: [] }
    expect(await collect(model.stream(request))).toEqual([
      { type: 'text', delta: 'a' },
      { type: 'text', delta: 'b' },
      { type: 'tool-call', call: { id: 'call_1_0', name: 'read', arguments: '{"path":"x"}' } },
      { type: 'tool-call', call: { id: 'mine', name: 'raw', arguments: '{not json' } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 3, outputTokens: 4 } },
    ])
    messages.push({ role: 'assistant', content: 'later' })
    expect(model.requests[0].messages).toEqual([{ role: 'user', content: 'hi' }])
    expect(await collect(model.stream(request))).toEqual([
      { type: 'text', delta: 'saw 2 messages' },
      { type: 'done', finishReason: 'stop' },
    ])
    expect(model.remaining).toBe(0)
    const error = await collect(model.stream(request)).catch((thrown: unknown) => thrown)
    expect(error).toBeInstanceOf(ScriptExhaustedError)
    expect((error as Error).message).toBe('the scripted model has 2 turn(s) but request 3 arrived; last message assistant: "later"')
    await fiber.dispose()
    expect(ctx.get('model')).toBeUndefined()
  })

  it('stops a delayed stream when the request signal aborts', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: ['x', 'y'], delayMs: 1000 }] })
    const controller = new AbortController()
    setTimeout(() => controller.abort(new Error('stop')), 10)
    const seen: ModelEvent[] = []
    const stream = async () => {
      for await (const event of ctx.get('model')!.stream({ messages: [], tools: [], signal: controller.signal })) seen.push(event)
    }
    // The first delta waits 1 s; the abort at 10 ms rejects the wait with the signal's reason.
    await expect(stream()).rejects.toThrow('stop')
    expect(seen).toEqual([])
  })
})
