import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { Agent, SessionLog, loadSession, type AgentEvent } from '@cordage/agent'
import { startFakeAnthropic, type FakeAnthropicServer } from '@cordage/testing'
import { toWireMessages } from '../src/wire.js'
import { lengthTool, loadModel } from './helpers.js'

let server: FakeAnthropicServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const script = [
  {
    thinking: 'Two words: measure both.',
    toolCalls: [
      { id: 'toolu_1', name: 'word_length', arguments: { word: 'rope' } },
      { id: 'toolu_2', name: 'word_length', arguments: { word: 'cord' } },
    ],
  },
  { thinking: 'Both are 4. One more check.', redactedThinking: true, toolCalls: [{ id: 'toolu_3', name: 'word_length', arguments: { word: 'twine' } }] },
  { text: 'rope and cord have 4 letters, twine 5.' },
]

it('keeps thinking through a tool-use run: streamed as its own events, logged as content, sent back signed and first in each answered turn', async () => {
  // A model that always thinks: the fake rejects any answered tool-use turn whose thinking is missing or altered.
  server = await startFakeAnthropic(script, { alwaysThinks: true })
  const cwd = await mkdtemp(join(tmpdir(), 'cordage-anthropic-'))
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'claude-haiku-4-5' })
  ctx.tools.register(lengthTool)
  const session = SessionLog.create({ cwd })
  const events: AgentEvent[] = []
  const result = await new Agent(ctx, { session, system: 'You count letters.', onEvent: (event) => events.push(event) }).run(
    'How long are rope, cord and twine?',
  )
  await session.close()

  expect(result).toMatchObject({ stopReason: 'completed', turns: 3, text: 'rope and cord have 4 letters, twine 5.' })
  const thinking = events.filter((event) => event.type === 'thinking/delta').map((event: any) => event.delta)
  expect(thinking.join('')).toBe('Two words: measure both.Both are 4. One more check.')
  // Each later request carries every earlier turn's thinking exactly as issued, in its turn, first.
  const issued = server.requests.map((request) => request.body.messages.filter((message: any) => message.role === 'assistant'))
  expect(issued[1][0].content[0]).toMatchObject({ type: 'thinking', thinking: 'Two words: measure both.', signature: expect.any(String) })
  expect(issued[2][1].content.map((block: any) => block.type)).toEqual(['redacted_thinking', 'thinking', 'tool_use'])
  expect(issued[2][0]).toEqual(issued[1][0])
  // The session log holds the thinking as content of the assistant turn (no values), with the model that made it.
  const logged = loadSession(session.file)
    .events.filter((event) => event.type === 'assistant/message')
    .map((event: any) => event.data)
  expect(logged[0].thinking).toEqual([{ text: 'Two words: measure both.', signature: issued[1][0].content[0].signature }])
  expect(logged[1].thinking).toEqual([
    { text: '', redacted: issued[2][1].content[0].data },
    { text: 'Both are 4. One more check.', signature: expect.any(String) },
  ])
  expect(logged[0].model).toBe('anthropic:claude-haiku-4-5')
  await dispose()
})

it('resumes a tool-use turn from the session log and sends its thinking back byte for byte', async () => {
  server = await startFakeAnthropic(script, { alwaysThinks: true })
  const cwd = await mkdtemp(join(tmpdir(), 'cordage-anthropic-'))
  const first = await loadModel(server.baseURL, { model: 'claude-haiku-4-5' })
  first.ctx.tools.register(lengthTool)
  const session = SessionLog.create({ cwd })
  expect((await new Agent(first.ctx, { session }).run('Measure.', { maxTurns: 1 })).stopReason).toBe('max-turns')
  await session.close(false)
  await first.dispose()

  const second = await loadModel(server.baseURL, { model: 'claude-haiku-4-5' })
  second.ctx.tools.register(lengthTool)
  const resumed = SessionLog.open(session.file)
  const result = await new Agent(second.ctx, { session: resumed }).run()
  await resumed.close()
  expect(result).toMatchObject({ stopReason: 'completed', turns: 2 })
  expect(server.requests[1]!.body.messages[1].content[0]).toEqual(server.requests[2]!.body.messages[1].content[0])
  await second.dispose()
})

it('drops thinking that another model produced (switching models mid-conversation)', () => {
  const messages = [
    { role: 'user' as const, content: 'hi' },
    { role: 'assistant' as const, content: 'a', thinking: [{ text: 't', signature: 's' }], model: 'anthropic:claude-opus-4-1' },
    { role: 'user' as const, content: 'more' },
    { role: 'assistant' as const, content: 'b', thinking: [{ text: 'u', signature: 'v' }], model: 'anthropic:claude-haiku-4-5' },
    { role: 'assistant' as const, content: 'c', thinking: [{ text: 'DeepSeek reasoning, unsigned' }], model: 'anthropic:claude-haiku-4-5' },
  ]
  const { messages: wire } = toWireMessages(messages, 'anthropic:claude-haiku-4-5')
  expect(wire[1]!.content).toEqual([{ type: 'text', text: 'a' }])
  expect(wire[3]!.content).toEqual([
    { type: 'thinking', thinking: 'u', signature: 'v' },
    { type: 'text', text: 'b' },
    { type: 'text', text: 'c' },
  ])
})

it('puts cache breakpoints on the tools, the system prompt and the conversation, so each turn reads the previous prefix; usage and cost add up', async () => {
  server = await startFakeAnthropic(script, { alwaysThinks: true })
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'claude-haiku-4-5' })
  ctx.tools.register(lengthTool)
  const result = await new Agent(ctx, { system: 'You count letters. '.repeat(40) }).run('How long are rope, cord and twine?')
  const bodies = server.requests.map((request) => request.body)
  for (const body of bodies) {
    expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' })
    expect(body.system.at(-1).cache_control).toEqual({ type: 'ephemeral' })
    expect(body.messages.at(-1).content.at(-1).cache_control).toEqual({ type: 'ephemeral' })
  }
  const caches = server.requests.map((request) => request.cache!)
  expect(caches[0]!.read).toBe(0)
  expect(caches[1]!.read).toBe(caches[0]!.total)
  expect(caches[2]!.read).toBeGreaterThan(caches[1]!.read)
  const read = caches.reduce((sum, cache) => sum + cache.read, 0)
  const written = caches.reduce((sum, cache) => sum + cache.write, 0)
  expect(result.usage.cacheReadTokens).toBe(read)
  expect(result.usage.cacheWriteTokens).toBe(written)
  expect(result.usage.inputTokens).toBe(caches.reduce((sum, cache) => sum + cache.total, 0))
  const expected = ((result.usage.inputTokens - read - written) * 1 + read * 0.1 + written * 1.25 + result.usage.outputTokens * 5) / 1e6
  expect(result.cost).toBeCloseTo(expected, 12)
  await dispose()
})

it('over real HTTP, a prompt the API refuses as too long is compacted and the run goes on, thinking rules kept', async () => {
  const big = 'y'.repeat(20_000)
  server = await startFakeAnthropic(
    [
      { thinking: 'Read the big file.', toolCalls: [{ id: 'toolu_big', name: 'word_length', arguments: { word: big } }] },
      // The compaction request: its summary.
      { text: 'Task: measure the word. Files: none. State: the measured word was very long. Next: answer.' },
      { thinking: 'Answer now.', text: 'It has 20000 letters.' },
    ],
    { alwaysThinks: true, contextWindow: 8000 },
  )
  const { ctx, dispose } = await loadModel(server.baseURL, { model: 'claude-haiku-4-5', contextWindow: 1_000_000 })
  ctx.tools.register(lengthTool)
  const events: AgentEvent[] = []
  const result = await new Agent(ctx, { system: 'You measure words.', onEvent: (event) => events.push(event) }).run('How long is the word?')
  expect(result).toMatchObject({ stopReason: 'completed', text: 'It has 20000 letters.' })
  expect(events.find((event) => event.type === 'compact')).toMatchObject({ reason: 'overflow' })
  const codes = server.requests.map((request) => (request.cache ? 200 : 400))
  // The refused turn, the summary request refused too, the summary request with old results cleared, the turn after compaction.
  expect(codes).toEqual([200, 400, 400, 200, 200])
  const last = server.requests.at(-1)!.body.messages
  expect(last[0].content[0].text).toContain('<context source="compaction">')
  await dispose()
})
