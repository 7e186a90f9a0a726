import { afterEach, expect, it } from 'vitest'
import { Agent, type AgentEvent } from '@cordage/agent'
import type { ToolDefinition } from '@cordage/core'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { toWireMessages } from '../src/wire.js'
import { collect, loadModel } from './helpers.js'

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const measure: ToolDefinition<{ word: string }, { length: number }> = {
  name: 'measure',
  description: 'Length of a word.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false },
  output: {
    schema: { type: 'object', properties: { length: { type: 'number' } }, required: ['length'] },
    render: (_args, value) => [{ type: 'text', text: String(value.length) }],
  },
  execute: ({ word }) => ({ length: word.length }),
}

const script = () => [
  { reasoning: 'Measure rope first.', toolCalls: [{ id: 'call_1', name: 'measure', arguments: { word: 'rope' } }] },
  { reasoning: '', toolCalls: [{ id: 'call_2', name: 'measure', arguments: { word: 'twine' } }] },
  { reasoning: 'Done measuring.', text: 'rope 4, twine 5.' },
]

it('streams DeepSeek reasoning_content as thinking and keeps it as a block', async () => {
  server = await startFakeOpenAI([{ reasoning: 'Think about it carefully.', text: 'Answer.', chunkSize: 5 }], { deepseek: true })
  const { model, dispose } = await loadModel(server.baseURL)
  const events = await collect(model.stream({ messages: [{ role: 'user', content: 'q' }], tools: [] }))
  expect(
    events
      .filter((event) => event.type === 'thinking')
      .map((event: any) => event.delta)
      .join(''),
  ).toBe('Think about it carefully.')
  expect(events.find((event) => event.type === 'thinking-block')).toEqual({ type: 'thinking-block', block: { text: 'Think about it carefully.' } })
  expect(events.at(-1)).toMatchObject({ type: 'done', usage: { reasoningTokens: 7, cacheReadTokens: 0 } })
  await dispose()
})

it('sends reasoning_content back on every tool-call turn of a DeepSeek thinking run ("" when it was empty), never on a plain answer', async () => {
  server = await startFakeOpenAI(script(), { deepseek: true })
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'deepseek-v4-pro' })
  ctx.tools.register(measure)
  const events: AgentEvent[] = []
  const result = await new Agent(ctx, { system: 'Measure words.', onEvent: (event) => events.push(event) }).run('How long are rope and twine?')
  expect(result).toMatchObject({ stopReason: 'completed', text: 'rope 4, twine 5.' })
  expect(
    events
      .filter((event) => event.type === 'thinking/delta')
      .map((event: any) => event.delta)
      .join(''),
  ).toBe('Measure rope first.Done measuring.')
  const third = server.requests[2]!.body.messages.filter((message: any) => message.role === 'assistant')
  expect(third.map((message: any) => message.reasoning_content)).toEqual(['Measure rope first.', ''])
  await dispose()
})

it('sends no reasoning_content on turns without tool calls, and "" for reasoning another model produced', () => {
  const options = { id: 'openai:deepseek-v4-pro', reasoningContent: 'auto' as const, deepseek: true }
  const wire = toWireMessages(
    [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', thinking: [{ text: 'plain answer reasoning' }], model: 'openai:deepseek-v4-pro' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'measure', arguments: '{}' }], thinking: [{ text: 'other' }], model: 'openai:other' },
    ],
    'omit',
    options,
  ) as any[]
  expect(wire[1]).toEqual({ role: 'assistant', content: 'a' })
  expect(wire[3].reasoning_content).toBe('')
})

it('reports OpenAI-style cached_tokens as cache reads', async () => {
  server = await startFakeOpenAI([{ text: 'one' }, { text: 'two' }])
  const { model, dispose } = await loadModel(server.baseURL)
  const messages = [
    { role: 'system' as const, content: 'Stable system prompt. '.repeat(30) },
    { role: 'user' as const, content: 'a' },
  ]
  await collect(model.stream({ messages, tools: [] }))
  const second = await collect(model.stream({ messages: [...messages, { role: 'assistant', content: 'one' }, { role: 'user', content: 'b' }], tools: [] }))
  expect((second.at(-1) as any).usage.cacheReadTokens).toBeGreaterThan(100)
  await dispose()
})

it('fails as DeepSeek does when reasoning_content is withheld (reasoningContent: never), which is why auto sends it', async () => {
  server = await startFakeOpenAI(script(), { deepseek: true })
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'deepseek-v4-pro', reasoningContent: 'never' })
  ctx.tools.register(measure)
  const failure = await new Agent(ctx).run('How long are rope and twine?').catch((error) => error)
  expect(failure.code).toBe('MODEL_HTTP')
  expect(failure.message).toMatch(/The `reasoning_content` in the thinking mode must be passed back to the API/)
  await dispose()
})

it('keeps the prefix stable across turns, so the server reports cache hits that the run totals', async () => {
  server = await startFakeOpenAI(script(), { deepseek: true })
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'deepseek-v4-pro' })
  ctx.tools.register(measure)
  const result = await new Agent(ctx, { system: 'Measure words carefully. '.repeat(20) }).run('How long are rope and twine?')
  const [, second, third] = server.requests.map((request) => request.rawBody)
  // Each request starts with the previous one's tools and messages, byte for byte.
  const prefix = (raw: string) => JSON.stringify(JSON.parse(raw).messages.slice(0, -2))
  expect(prefix(third!).startsWith(prefix(second!).slice(0, -1))).toBe(true)
  expect(result.usage.cacheReadTokens).toBeGreaterThan(100)
  // deepseek-v4-pro is priced: cache hits at their own rate.
  const { inputTokens, cacheReadTokens, outputTokens } = result.usage
  expect(result.cost).toBeCloseTo(((inputTokens - cacheReadTokens) * 1.32 + cacheReadTokens * 0.044 + outputTokens * 3.96) / 1e6, 12)
  await dispose()
})
