import Anthropic, { APIError, AuthenticationError, RateLimitError } from '@anthropic-ai/sdk'
import { afterEach, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropicServer } from '@cordage/testing'

let server: FakeAnthropicServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const client = (options: { maxRetries?: number } = {}) =>
  new Anthropic({ apiKey: 'sk-ant-test', baseURL: server!.baseURL, maxRetries: options.maxRetries ?? 0 })
const tool = { name: 'lookup', description: 'Looks a word up.', input_schema: { type: 'object' as const, properties: { word: { type: 'string' } } } }

describe('the fake Anthropic server, read by the official SDK', () => {
  it('streams a message the SDK assembles: signed thinking, text, tool_use input from input_json_delta, usage with cache fields', async () => {
    server = await startFakeAnthropic(
      [{ thinking: 'I should look it up.', text: 'Looking.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { word: 'cordage' } }] }],
      {
        apiKey: 'sk-ant-test',
      },
    )
    const stream = client().messages.stream({
      model: 'claude-sonnet-4-6',
      max_tokens: 2048,
      messages: [{ role: 'user', content: 'Define cordage.' }],
      tools: [tool],
    })
    const types: string[] = []
    stream.on('streamEvent', (event) => types.push(event.type))
    const message = await stream.finalMessage()
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use'])
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'I should look it up.', signature: expect.any(String) })
    expect(message.content[2]).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { word: 'cordage' } })
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage).toMatchObject({
      input_tokens: expect.any(Number),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      output_tokens: expect.any(Number),
    })
    expect(types[0]).toBe('message_start')
    expect(types.at(-1)).toBe('message_stop')
    // The SDK drops `ping` events; the raw body carries them.
    expect(types).not.toContain('ping')
  })

  it('answers a non-streaming request with the same message', async () => {
    server = await startFakeAnthropic([{ text: 'Hi.' }])
    const message = await client().messages.create({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hello' }] })
    expect(message.content).toEqual([{ type: 'text', text: 'Hi.' }])
    expect(message.stop_reason).toBe('end_turn')
  })

  it('sends the real error bodies: the SDK raises its typed errors with status, type, request id and retry-after', async () => {
    server = await startFakeAnthropic(
      [
        { status: 429, message: 'Number of request tokens has exceeded your per-minute rate limit', retryAfter: 7 },
        { status: 529, message: 'Overloaded' },
      ],
      { apiKey: 'sk-ant-test' },
    )
    const sdk = client()
    const body = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'x' }] }
    const limited = await sdk.messages.create(body).catch((error) => error)
    expect(limited).toBeInstanceOf(RateLimitError)
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('7')
    expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' }, request_id: expect.stringMatching(/^req_/) })
    const overloaded = await sdk.messages.create(body).catch((error) => error)
    expect(overloaded).toBeInstanceOf(APIError)
    expect(overloaded.status).toBe(529)
    expect(overloaded.error.error.type).toBe('overloaded_error')
    const wrongKey = await new Anthropic({ apiKey: 'nope', baseURL: server.baseURL, maxRetries: 0 }).messages.create(body).catch((error) => error)
    expect(wrongKey).toBeInstanceOf(AuthenticationError)
  })

  it('sends an error event mid-stream, which the SDK throws while the stream is read', async () => {
    server = await startFakeAnthropic([{ text: 'partial answer', streamError: { after: 4, type: 'overloaded_error', message: 'Overloaded' } }])
    const stream = await client().messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], stream: true })
    const seen: string[] = []
    const error = await (async () => {
      for await (const event of stream) seen.push(event.type)
    })().catch((caught) => caught)
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta'])
    expect(error).toBeInstanceOf(APIError)
    expect(error.status).toBeUndefined()
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })
  })

  it('enforces the tool_use → tool_result rule and the thinking rules with the API’s 400 messages', async () => {
    server = await startFakeAnthropic([{ thinking: 'plan', toolCalls: [{ id: 'toolu_9', name: 'lookup', arguments: {} }] }], { alwaysThinks: true })
    const sdk = client()
    const first = await sdk.messages.create({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [tool] })
    const [thinking, toolUse] = first.content as any[]
    const result = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_9', content: 'found' }] }
    const unanswered = await sdk.messages
      .create({
        model: 'm',
        max_tokens: 100,
        tools: [tool],
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [toolUse] },
          { role: 'user', content: 'next' },
        ],
      })
      .catch((error) => error)
    expect(unanswered.status).toBe(400)
    expect(unanswered.message).toMatch(/`tool_use` ids were found without `tool_result` blocks immediately after: toolu_9/)
    const withoutThinking = await sdk.messages
      .create({ model: 'm', max_tokens: 100, tools: [tool], messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [toolUse] }, result] })
      .catch((error) => error)
    expect(withoutThinking.message).toMatch(/Expected `thinking` or `redacted_thinking`, but found `tool_use`/)
    const altered = await sdk.messages
      .create({
        model: 'm',
        max_tokens: 100,
        tools: [tool],
        messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ ...thinking, thinking: 'plan!' }, toolUse] }, result],
      })
      .catch((error) => error)
    expect(altered.message).toMatch(/Invalid `signature` in `thinking` block/)
    const tooMany = await sdk.messages
      .create({
        model: 'm',
        max_tokens: 100,
        system: [1, 2, 3, 4, 5].map((n) => ({ type: 'text' as const, text: `part ${n}`, cache_control: { type: 'ephemeral' as const } })),
        messages: [{ role: 'user', content: 'go' }],
      })
      .catch((error) => error)
    expect(tooMany.message).toMatch(/A maximum of 4 blocks with cache_control may be provided. Found 5./)
  })

  it('simulates the prompt cache: a request that repeats a cached prefix reads it, a longer one writes the rest', async () => {
    server = await startFakeAnthropic([{ text: 'one' }, { text: 'two' }])
    const sdk = client()
    const system = [{ type: 'text' as const, text: 'You are careful. '.repeat(50), cache_control: { type: 'ephemeral' as const } }]
    const first = await sdk.messages.create({ model: 'm', max_tokens: 100, system, messages: [{ role: 'user', content: 'a' }] })
    const second = await sdk.messages.create({ model: 'm', max_tokens: 100, system, messages: [{ role: 'user', content: 'b' }] })
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(200)
    expect(first.usage.cache_read_input_tokens).toBe(0)
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens)
    expect(second.usage.cache_creation_input_tokens).toBe(0)
  })
})
