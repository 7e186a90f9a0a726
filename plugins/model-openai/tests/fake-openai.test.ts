import { afterEach, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server!.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
}

const json = (response: Response): Promise<any> => response.json()

/** The JSON payloads of an SSE body, `[DONE]` kept as a string. */
async function chunks(response: Response): Promise<any[]> {
  const text = await response.text()
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true)
      const data = event.slice(6)
      return data === '[DONE]' ? data : JSON.parse(data)
    })
}

const user = [{ role: 'user', content: 'hi' }]

describe('the fake OpenAI server (test kit)', () => {
  it('streams the real chunk shapes: role chunk, split text, tool-call deltas, finish, usage, [DONE]', async () => {
    server = await startFakeOpenAI([
      { text: 'Hello there', toolCalls: [{ id: 'call_x', name: 'f', arguments: '{"a":12}' }], usage: { prompt_tokens: 5, completion_tokens: 7 }, chunkSize: 5 },
    ])
    const response = await post({ model: 'm', messages: user, stream: true, stream_options: { include_usage: true } })
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    const all = await chunks(response)
    expect(all.at(-1)).toBe('[DONE]')
    expect(all[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'm',
      usage: null,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    })
    expect(all.slice(1, -1).map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
      { content: 'Hello' },
      { content: ' ther' },
      { content: 'e' },
      { tool_calls: [{ index: 0, id: 'call_x', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '12}' } }] },
      {},
      null,
    ])
    expect(all.at(-3).choices[0].finish_reason).toBe('tool_calls')
    expect(all.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } })
  })

  it('sends no usage chunk and no usage fields without stream_options.include_usage', async () => {
    server = await startFakeOpenAI([{ text: 'ok' }])
    const all = await chunks(await post({ model: 'm', messages: user, stream: true }))
    expect(all.filter((chunk) => typeof chunk === 'object' && 'usage' in chunk)).toEqual([])
  })

  it('answers a non-streaming request with one chat.completion', async () => {
    server = await startFakeOpenAI([{ toolCalls: [{ id: 'c', name: 'f', arguments: { a: 1 } }], usage: { prompt_tokens: 1, completion_tokens: 1 } }])
    const body = await json(await post({ model: 'm', messages: user }))
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [
        {
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        },
      ],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    })
  })

  it.each([
    [{ messages: user }, 'you must provide a model parameter'],
    [
      { model: 'm', messages: [...user, { role: 'tool', tool_call_id: 'nope', content: 'x' }] },
      "messages[1]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (unknown tool_call_id \"nope\")",
    ],
    [
      {
        model: 'm',
        messages: [
          ...user,
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'user', content: 'next' },
        ],
      },
      "messages[2]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing a)",
    ],
    [{ model: 'm', messages: user, tools: [{ name: 'f' }] }, "tools[0] must be { type: 'function', function: { name, parameters } }"],
  ])('rejects a request that breaks the wire format with a 400, like the real service (%#)', async (body, message) => {
    server = await startFakeOpenAI([{ text: 'unused' }])
    const response = await post(body)
    expect(response.status).toBe(400)
    expect((await json(response)).error.message).toBe(message)
    expect(server.pending()).toBe(1)
  })

  it('checks the bearer key when given one, serves /v1/models, and records every request', async () => {
    server = await startFakeOpenAI([(request) => ({ text: `you said ${request.body.messages[0].content}` })], { apiKey: 'sk-1' })
    expect((await post({ model: 'm', messages: user })).status).toBe(401)
    const ok = await json(await post({ model: 'm', messages: user }, { authorization: 'Bearer sk-1' }))
    expect(ok.choices[0].message.content).toBe('you said hi')
    expect((await json(await fetch(`${server.baseURL}/models`))).data[0].id).toBe('fake-model')
    expect(server.requests.map((request) => [request.method, request.path, request.headers.authorization])).toEqual([
      ['POST', '/v1/chat/completions', undefined],
      ['POST', '/v1/chat/completions', 'Bearer sk-1'],
      ['GET', '/v1/models', undefined],
    ])
  })

  it('says so when the script is exhausted', async () => {
    server = await startFakeOpenAI([])
    const response = await post({ model: 'm', messages: user })
    expect(response.status).toBe(400)
    expect((await json(response)).error.message).toBe('fake OpenAI server: no scripted turn left for request 1 (0 served)')
  })

  it('scripts HTTP errors with Retry-After headers', async () => {
    server = await startFakeOpenAI([{ status: 429, retryAfter: 2, retryAfterMs: 1500, message: 'slow down' }])
    const response = await post({ model: 'm', messages: user })
    expect([response.status, response.headers.get('retry-after'), response.headers.get('retry-after-ms')]).toEqual([429, '2', '1500'])
    expect((await json(response)).error).toEqual({ message: 'slow down', type: 'rate_limit_exceeded', param: null, code: 'rate_limit_exceeded' })
  })
})
