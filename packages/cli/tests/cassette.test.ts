import { createTestContext } from '@cordage/testing'
import { Agent, type ModelEvent } from '@cordage/agent'
import { describe, expect, it } from 'vitest'
import { CassetteModel, cassettePlugin, parseCassette } from '../src/index.js'

async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = []
  for await (const event of stream) events.push(event)
  return events
}

describe('CassetteModel', () => {
  it('plays one turn per request: text in chunks, then tool calls, then done', async () => {
    const model = new CassetteModel(
      parseCassette({
        version: 1,
        turns: [
          {
            text: 'abcdefgh',
            toolCalls: [
              { name: 'read', arguments: { path: 'a' } },
              { id: 'x', name: 'grep', arguments: '{"pattern":"b"}' },
            ],
          },
          { text: 'end', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 1 } },
        ],
      }),
      { chunkSize: 3 },
    )
    expect(await collect(model.stream({ messages: [], tools: [] }))).toEqual([
      { type: 'text', delta: 'abc' },
      { type: 'text', delta: 'def' },
      { type: 'text', delta: 'gh' },
      { type: 'tool-call', call: { id: 'call_1_1', name: 'read', arguments: '{"path":"a"}' } },
      { type: 'tool-call', call: { id: 'x', name: 'grep', arguments: '{"pattern":"b"}' } },
      { type: 'done', finishReason: 'tool_calls' },
    ])
    expect(model.remaining).toBe(1)
    expect(await collect(model.stream({ messages: [], tools: [] }))).toEqual([
      { type: 'text', delta: 'end' },
      { type: 'done', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 1 } },
    ])
    await expect(collect(model.stream({ messages: [], tools: [] }))).rejects.toThrow('the cassette has no turn 3 (it holds 2)')
  })

  it.each([
    [{ turns: [] }, 'version: expected 1 but got undefined'],
    [{ version: 1 }, 'expected { "version": 1, "turns": [...] }'],
    [{ version: 1, turns: [{ text: 5 }] }, 'turns[0].text: expected string'],
    [{ version: 1, turns: [{ toolCalls: [{ name: 'x', arguments: 3 }] }] }, 'turns[0].toolCalls[0].arguments: expected a JSON text or an object'],
  ])('rejects a malformed cassette %j', (document, message) => {
    expect(() => parseCassette(document, 'tape.json')).toThrow(`tape.json: ${message}`)
  })

  it('as the `model` service, a call to an unregistered tool becomes a failed result the agent shows', async () => {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(cassettePlugin, {
      cassette: { version: 1, turns: [{ toolCalls: [{ id: 'c1', name: 'missing', arguments: {} }] }, { text: 'gave up' }] },
    })
    const agent = new Agent(ctx)
    const result = await agent.run('go')
    expect(result).toMatchObject({ stopReason: 'completed', text: 'gave up', turns: 2 })
    expect(agent.messages[2]).toMatchObject({
      role: 'tool',
      callId: 'c1',
      isError: true,
      content: [{ type: 'text', text: 'Error: unknown tool "missing"; available: (none)' }],
    })
    await fiber.dispose()
    expect(ctx.get('model')).toBeUndefined()
  })
})
