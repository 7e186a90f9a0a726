import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { collect, failure, loadModel, textOf } from './helpers.js'

const hi = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] }

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as { port: number }
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

describe('model-openai failures', () => {
  it('turns a 401 into MODEL_AUTH naming the fix, without retrying', async () => {
    server = await startFakeOpenAI([{ text: 'never' }], { apiKey: 'sk-right' })
    const { model, dispose } = await loadModel(server.baseURL, { apiKey: 'sk-wrong', maxRetries: 3 })
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_AUTH')
    expect(error.status).toBe(401)
    expect(error.message).toBe(`${server.baseURL} answered 401: Incorrect API key provided. — check config.apiKey`)
    expect(server.requests).toHaveLength(1)
    await dispose()
  })

  it('retries a 429, waiting the retry-after-ms the server asked for, then succeeds', async () => {
    server = await startFakeOpenAI([{ status: 429, message: 'Rate limit reached', retryAfterMs: 150 }, { text: 'after the wait' }])
    const { model, dispose } = await loadModel(server.baseURL, { maxRetries: 2 })
    expect(textOf(await collect(model.stream(hi)))).toBe('after the wait')
    expect(server.requests).toHaveLength(2)
    // backoffMs is 1: only the server's hint explains a gap this long.
    expect(server.requests[1]!.time - server.requests[0]!.time).toBeGreaterThanOrEqual(140)
    await dispose()
  })

  it('honours Retry-After in seconds, capped by maxRetryDelayMs', async () => {
    server = await startFakeOpenAI([{ status: 429, retryAfter: 30 }, { text: 'ok' }])
    const { model, dispose } = await loadModel(server.baseURL, { maxRetryDelayMs: 120 })
    expect(textOf(await collect(model.stream(hi)))).toBe('ok')
    expect(server.requests[1]!.time - server.requests[0]!.time).toBeGreaterThanOrEqual(110)
    await dispose()
  })

  it('gives up on repeated 500s after maxRetries with MODEL_HTTP and the attempt count', async () => {
    server = await startFakeOpenAI([
      { status: 500, message: 'boom' },
      { status: 502, message: 'bad gateway' },
      { status: 503, message: 'overloaded' },
      { text: 'unused' },
    ])
    const { model, dispose } = await loadModel(server.baseURL, { maxRetries: 2 })
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_HTTP')
    expect(error.status).toBe(503)
    expect(error.attempts).toBe(3)
    expect(error.message).toBe(`${server.baseURL} answered 503: overloaded — the server failed; try again later (gave up after 3 attempts; maxRetries is 2)`)
    expect(server.requests).toHaveLength(3)
    expect(server.pending()).toBe(1)
    await dispose()
  })

  it('does not retry a 400 and passes the server message through', async () => {
    server = await startFakeOpenAI([{ status: 400, message: "Invalid value for 'temperature': must be at most 2." }])
    const { model, dispose } = await loadModel(server.baseURL)
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_HTTP')
    expect(error.message).toContain("Invalid value for 'temperature'")
    expect(server.requests).toHaveLength(1)
    await dispose()
  })

  it('explains a 404 as a base URL or model problem', async () => {
    server = await startFakeOpenAI([])
    const { model, dispose } = await loadModel(server.baseURL.replace(/\/v1$/, '/wrong'))
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_HTTP')
    expect(error.message).toMatch(/answered 404: Unknown request URL: POST \/wrong\/chat\/completions — check baseURL \(it usually ends in \/v1/)
    await dispose()
  })

  it('reports a malformed stream chunk as MODEL_STREAM, after the text already streamed, without retrying', async () => {
    server = await startFakeOpenAI([{ text: 'partial answer', chunkSize: 50, fault: { type: 'malformed', after: 2 } }, { text: 'unused' }])
    const { model, dispose } = await loadModel(server.baseURL)
    const seen: string[] = []
    const error = await failure(
      (async function* () {
        for await (const event of model.stream(hi)) {
          if (event.type === 'text') seen.push(event.delta)
          yield event
        }
      })(),
    )
    expect(seen).toEqual(['partial answer'])
    expect(error.code).toBe('MODEL_STREAM')
    expect(error.message).toMatch(/^the server sent a malformed stream chunk \(not JSON\): \{"id": broken/)
    expect(server.requests).toHaveLength(1)
    await dispose()
  })

  it('reports connection refused as MODEL_UNREACHABLE after retrying', async () => {
    const port = await closedPort()
    const { model, dispose } = await loadModel(`http://127.0.0.1:${port}/v1`, { maxRetries: 1 })
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_UNREACHABLE')
    expect(error.attempts).toBe(2)
    expect(error.message).toMatch(
      new RegExp(`^cannot reach http://127.0.0.1:${port}/v1 \\(ECONNREFUSED: .*\\) — check that the server is running and that baseURL is right`),
    )
    await dispose()
  })

  it('retries a connection dropped before any byte, then succeeds', async () => {
    server = await startFakeOpenAI([{ fault: { type: 'drop', after: 0 } }, { text: 'second try' }])
    const { model, dispose } = await loadModel(server.baseURL)
    expect(textOf(await collect(model.stream(hi)))).toBe('second try')
    expect(server.requests).toHaveLength(2)
    await dispose()
  })

  it('fails with MODEL_INTERRUPTED and no retry when the connection drops after text was streamed', async () => {
    server = await startFakeOpenAI([{ text: 'half of it', chunkSize: 100, fault: { type: 'drop', after: 2 } }, { text: 'unused' }])
    const { model, dispose } = await loadModel(server.baseURL)
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_INTERRUPTED')
    expect(server.requests).toHaveLength(1)
    await dispose()
  })

  it('stops mid-stream on abort with ABORTED and closes the connection', async () => {
    server = await startFakeOpenAI([{ text: 'first words', chunkSize: 100, fault: { type: 'stall', after: 2 } }])
    const { model, dispose } = await loadModel(server.baseURL, { timeoutMs: 60_000 })
    const controller = new AbortController()
    const seen: string[] = []
    const error = await failure(
      (async function* () {
        for await (const event of model.stream({ ...hi, signal: controller.signal })) {
          if (event.type === 'text') {
            seen.push(event.delta)
            controller.abort()
          }
          yield event
        }
      })(),
    )
    expect(seen).toEqual(['first words'])
    expect([error.code, error.message]).toEqual(['ABORTED', 'the model request was cancelled'])
    await expect.poll(() => server!.requests[0]!.disconnected).toBe(true)
    await dispose()
  })

  it('stops a stream in flight with ABORTED when the plugin is unloaded', async () => {
    server = await startFakeOpenAI([{ text: 'never ends', fault: { type: 'stall', after: 2 } }])
    const { model, dispose } = await loadModel(server.baseURL)
    const iterator = model.stream(hi)[Symbol.asyncIterator]()
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text', delta: 'neve' } })
    await dispose()
    await expect(iterator.next()).rejects.toMatchObject({ code: 'ABORTED', message: 'the model request was cancelled: the model-openai plugin was unloaded' })
    await expect.poll(() => server!.requests[0]!.disconnected).toBe(true)
  })

  it('reports a stalled stream as MODEL_TIMEOUT once timeoutMs passes with no data', async () => {
    server = await startFakeOpenAI([{ text: 'slow', fault: { type: 'stall', after: 2 } }])
    const { model, dispose } = await loadModel(server.baseURL, { timeoutMs: 200 })
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_TIMEOUT')
    expect(error.message).toBe('the stream stalled: no data for 200 ms — raise timeoutMs or check the server')
    await dispose()
  })

  it('cancels a retry wait on abort', async () => {
    server = await startFakeOpenAI([{ status: 429, retryAfterMs: 10_000 }, { text: 'unused' }])
    const { model, dispose } = await loadModel(server.baseURL, { maxRetryDelayMs: 60_000 })
    const controller = new AbortController()
    const pending = failure(model.stream({ ...hi, signal: controller.signal }))
    await expect.poll(() => server!.requests.length).toBe(1)
    controller.abort()
    expect((await pending).code).toBe('ABORTED')
    expect(server.requests).toHaveLength(1)
    await dispose()
  })
})

describe('model-openai against servers that are not quite Chat Completions', () => {
  async function serve(contentType: string, body: string): Promise<{ baseURL: string; close: () => Promise<void> }> {
    const { createServer: createHttpServer } = await import('node:http')
    const http = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': contentType })
      res.end(body)
    })
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const { port } = http.address() as { port: number }
    return {
      baseURL: `http://127.0.0.1:${port}/v1`,
      close: () =>
        new Promise((resolve) => {
          http.close(() => resolve())
          http.closeAllConnections()
        }),
    }
  }

  it('reports an HTML page (a base URL pointing at a website) as MODEL_STREAM naming baseURL', async () => {
    const site = await serve('text/html', '<!doctype html><title>Welcome</title>')
    const { model, dispose } = await loadModel(site.baseURL)
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_STREAM')
    expect(error.message).toBe(
      `expected an event stream from ${site.baseURL}/chat/completions but got text/html: <!doctype html><title>Welcome</title> — check that baseURL points at the API (it usually ends in /v1)`,
    )
    await dispose()
    await site.close()
  })

  it('accepts a JSON completion from a server that ignores stream: true', async () => {
    const plain = await serve(
      'application/json',
      JSON.stringify({ choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: 'whole answer' } }] }),
    )
    const { model, dispose } = await loadModel(plain.baseURL)
    expect(await collect(model.stream(hi))).toEqual([
      { type: 'text', delta: 'whole answer' },
      { type: 'done', finishReason: 'stop' },
    ])
    await dispose()
    await plain.close()
  })

  it('accepts a stream that ends after finish_reason without [DONE], and rejects one cut before it', async () => {
    const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    const finished = await serve('text/event-stream', chunk({ content: 'done' }, null) + chunk({}, 'stop'))
    const cut = await serve('text/event-stream', chunk({ content: 'half' }, null))
    const a = await loadModel(finished.baseURL)
    expect(await collect(a.model.stream(hi))).toEqual([
      { type: 'text', delta: 'done' },
      { type: 'done', finishReason: 'stop' },
    ])
    const b = await loadModel(cut.baseURL)
    const error = await failure(b.model.stream(hi))
    expect(error.code).toBe('MODEL_INTERRUPTED')
    expect(error.message).toBe('the connection closed before the stream finished (no finish_reason and no [DONE])')
    await a.dispose()
    await b.dispose()
    await finished.close()
    await cut.close()
  })
})

describe('context length', () => {
  it('maps a 400 about the maximum context length to MODEL_CONTEXT_LENGTH, not retried', async () => {
    const server = await startFakeOpenAI([
      { status: 400, message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens." },
    ])
    const { model, dispose } = await loadModel(server.baseURL)
    const error = await failure(model.stream({ messages: [{ role: 'user', content: 'x' }], tools: [] }))
    expect(error.code).toBe('MODEL_CONTEXT_LENGTH')
    expect(server.requests).toHaveLength(1)
    await dispose()
    await server.close()
  })
})
