import OpenAI, { AuthenticationError, BadRequestError, RateLimitError } from 'openai'
import { afterEach, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const client = () => new OpenAI({ apiKey: 'sk-test', baseURL: server!.baseURL, maxRetries: 0 })
const tools = [{ type: 'function' as const, function: { name: 'measure', parameters: { type: 'object', properties: { word: { type: 'string' } } } } }]

describe('the fake OpenAI server, read by the official openai SDK', () => {
  it('streams chunks the SDK accepts: tool-call deltas, DeepSeek reasoning_content, and usage with cache and reasoning details', async () => {
    server = await startFakeOpenAI(
      [{ reasoning: 'Measure it.', text: 'Measuring.', toolCalls: [{ id: 'call_1', name: 'measure', arguments: { word: 'rope' } }] }],
      {
        apiKey: 'sk-test',
        deepseek: true,
      },
    )
    const stream = await client().chat.completions.create({
      model: 'deepseek-v4-pro',
      messages: [{ role: 'user', content: 'How long is rope?' }],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    })
    let reasoning = ''
    let text = ''
    let args = ''
    let usage: any
    for await (const chunk of stream) {
      const delta: any = chunk.choices[0]?.delta
      reasoning += delta?.reasoning_content ?? ''
      text += delta?.content ?? ''
      args += delta?.tool_calls?.[0]?.function?.arguments ?? ''
      if (chunk.usage) usage = chunk.usage
    }
    expect({ reasoning, text, args }).toEqual({ reasoning: 'Measure it.', text: 'Measuring.', args: '{"word":"rope"}' })
    expect(usage).toMatchObject({
      prompt_cache_hit_tokens: 0,
      prompt_cache_miss_tokens: usage.prompt_tokens,
      completion_tokens_details: { reasoning_tokens: 3 },
    })
  })

  it('reports cached prompt tokens to the SDK on a request that repeats an earlier prefix', async () => {
    server = await startFakeOpenAI([{ text: 'a' }, { text: 'b' }])
    const sdk = client()
    const messages = [
      { role: 'system' as const, content: 'A long and stable system prompt. '.repeat(20) },
      { role: 'user' as const, content: 'first' },
    ]
    await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages })
    const second = await sdk.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [...messages, { role: 'assistant', content: 'a' }, { role: 'user', content: 'again' }],
    })
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(100)
  })

  it('sends the errors the SDK types: 401, 429 with retry-after, and DeepSeek’s thinking-mode 400', async () => {
    server = await startFakeOpenAI([{ status: 429, message: 'Rate limit reached', retryAfter: 2 }], { apiKey: 'sk-test', deepseek: true })
    const unauthorized = await new OpenAI({ apiKey: 'wrong', baseURL: server.baseURL, maxRetries: 0 }).chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((error) => error)
    expect(unauthorized).toBeInstanceOf(AuthenticationError)
    const limited = await client()
      .chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
      .catch((error) => error)
    expect(limited).toBeInstanceOf(RateLimitError)
    expect(limited.headers.get('retry-after')).toBe('2')
    const withheld = await client()
      .chat.completions.create({
        model: 'deepseek-v4-pro',
        tools,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'measure', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: '4' },
        ],
      })
      .catch((error) => error)
    expect(withheld).toBeInstanceOf(BadRequestError)
    expect(withheld.message).toMatch(/The `reasoning_content` in the thinking mode must be passed back to the API/)
  })
})
