import { afterEach, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropicServer } from '@cordage/testing'
import { collect, failure, loadModel } from './helpers.js'

let server: FakeAnthropicServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const request = (text = 'Hello') => ({
  messages: [
    { role: 'system' as const, content: 'Be brief.' },
    { role: 'user' as const, content: text },
  ],
  tools: [],
})

describe('model-anthropic', () => {
  it('streams thinking deltas, the signed thinking block, text and assembled tool calls, then done with usage', async () => {
    server = await startFakeAnthropic([
      { thinking: 'Count first.', text: 'Counting.', toolCalls: [{ id: 'toolu_a', name: 'word_length', arguments: { word: 'rope' } }] },
    ])
    const { model, dispose } = await loadModel(server.baseURL, { model: 'claude-haiku-4-5' })
    expect(model.id).toBe('anthropic:claude-haiku-4-5')
    expect(model.info).toEqual({ model: 'claude-haiku-4-5', contextWindow: 200_000, price: { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 } })
    const events = await collect(model.stream(request()))
    const thinking = events.filter((event) => event.type === 'thinking').map((event: any) => event.delta)
    expect(thinking.join('')).toBe('Count first.')
    expect(events.find((event) => event.type === 'thinking-block')).toEqual({
      type: 'thinking-block',
      block: { text: 'Count first.', signature: expect.any(String) },
    })
    expect(
      events
        .filter((event) => event.type === 'text')
        .map((event: any) => event.delta)
        .join(''),
    ).toBe('Counting.')
    expect(events.find((event) => event.type === 'tool-call')).toEqual({
      type: 'tool-call',
      call: { id: 'toolu_a', name: 'word_length', arguments: '{"word":"rope"}' },
    })
    const done = events.at(-1) as any
    expect(done.type).toBe('done')
    expect(done.finishReason).toBe('tool_calls')
    const wire = server.requests[0]!.body.usage
    expect(wire).toBeUndefined()
    expect(done.usage).toEqual({
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      cacheReadTokens: 0,
      cacheWriteTokens: expect.any(Number),
      reasoningTokens: 0,
    })
    expect(done.usage.inputTokens).toBeGreaterThanOrEqual(done.usage.cacheWriteTokens)
    const body = server.requests[0]!.body
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }])
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hello', cache_control: { type: 'ephemeral' } }] }])
    // This SDK version sends the key as a bearer token; the fake accepts both forms, as the API does.
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-ant-test')
    await dispose()
  })

  it.each([
    [{ status: 401, message: 'invalid x-api-key' }, 'MODEL_AUTH', /answered 401: invalid x-api-key \(request req_\w+\) — check config.apiKey/],
    [{ status: 429, message: 'rate limited', retryAfter: 3 }, 'MODEL_HTTP', /answered 429: rate limited .* rate limited: wait/],
    [{ status: 529, message: 'Overloaded' }, 'MODEL_HTTP', /answered 529: Overloaded .* overloaded/],
    [{ status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' }, 'MODEL_CONTEXT_LENGTH', /prompt is too long.*compact it/],
    [{ status: 400, message: 'messages: roles must alternate' }, 'MODEL_HTTP', /answered 400: messages: roles must alternate/],
  ])('maps HTTP %j to %s', async (turn, code, message) => {
    server = await startFakeAnthropic([turn])
    const { model, dispose } = await loadModel(server.baseURL)
    const error = await failure(model.stream(request()))
    expect(error.code).toBe(code)
    expect(error.message).toMatch(message)
    expect(error.status).toBe(turn.status)
    if (turn.status === 429) expect(error.retryAfterMs).toBe(3000)
    await dispose()
  })

  it('maps an error event after a 200 to MODEL_STREAM, after the text that came before it', async () => {
    server = await startFakeAnthropic([{ text: 'abcdefgh', streamError: { after: 4, type: 'overloaded_error', message: 'Overloaded' } }])
    const { model, dispose } = await loadModel(server.baseURL)
    const seen: string[] = []
    const error = await (async () => {
      for await (const event of model.stream(request())) if (event.type === 'text') seen.push(event.delta)
    })().catch((caught) => caught)
    expect(seen).toEqual(['abcd'])
    expect(error.code).toBe('MODEL_STREAM')
    expect(error.message).toMatch(/mid-stream \(overloaded_error\): Overloaded/)
    await dispose()
  })

  it('retries a 529 through the SDK and then streams', async () => {
    server = await startFakeAnthropic([{ status: 529, message: 'Overloaded', headers: { 'retry-after-ms': '1' } }, { text: 'ok' }])
    const { model, dispose } = await loadModel(server.baseURL, { maxRetries: 1 })
    const events = await collect(model.stream(request()))
    expect(
      events
        .filter((event) => event.type === 'text')
        .map((event: any) => event.delta)
        .join(''),
    ).toBe('ok')
    expect(server.requests).toHaveLength(2)
    await dispose()
  })

  it('fails MODEL_UNREACHABLE when nothing listens, and cancels with ABORTED', async () => {
    server = await startFakeAnthropic([{ text: 'slow', delayMs: 2000 }])
    const closed = await startFakeAnthropic()
    const address = closed.baseURL
    await closed.close()
    const unreachable = await loadModel(address)
    expect((await failure(unreachable.model.stream(request()))).code).toBe('MODEL_UNREACHABLE')
    await unreachable.dispose()
    const { model, dispose } = await loadModel(server.baseURL)
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 50)
    expect((await failure(model.stream({ ...request(), signal: controller.signal }))).code).toBe('ABORTED')
    await dispose()
  })

  it('cuts a stream that stalls after it started with MODEL_TIMEOUT', async () => {
    server = await startFakeAnthropic([{ text: 'slow', delayMs: 3000 }])
    const { model, dispose } = await loadModel(server.baseURL, { idleTimeoutMs: 200 })
    const error = await failure(model.stream(request()))
    expect(error.code).toBe('MODEL_TIMEOUT')
    expect(error.message).toMatch(/no event for 200 ms — raise idleTimeoutMs/)
    await dispose()
  })

  it('unloading removes ctx.model and aborts requests in flight', async () => {
    server = await startFakeAnthropic([{ text: 'never', delayMs: 5000 }])
    const { ctx, model, dispose } = await loadModel(server.baseURL)
    const pending = failure(model.stream(request()))
    // Unloaded once the request is in flight.
    await expect.poll(() => server!.requests.length, { timeout: 15_000, interval: 5 }).toBe(1)
    await dispose()
    const error = await pending
    expect(error.code).toBe('ABORTED')
    expect(error.message).toMatch(/unloaded/)
    expect(ctx.get('model')).toBeUndefined()
  })

  it('refuses a bad config at load, naming the plugin and the field', async () => {
    await expect(loadModel('http://127.0.0.1:1', { thinking: 4096, maxTokens: 2048 })).rejects.toThrow(
      /model-anthropic: config.thinking \(4096\) must be below config.maxTokens/,
    )
    await expect(loadModel('localhost:99')).rejects.toThrow(/model-anthropic: baseURL "localhost:99" is not an http\(s\) URL/)
    await expect(loadModel('http://127.0.0.1:1', { modle: 'x' } as any)).rejects.toThrow(/model-anthropic/)
  })
})
