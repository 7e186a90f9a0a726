import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { collect, failure, loadModel, textOf } from './helpers.js'

/** Whether this machine has an IPv6 loopback to listen on. */
const ipv6 = await new Promise<boolean>((resolve) => {
  const probe = createServer()
  probe.once('error', () => resolve(false))
  probe.listen(0, '::1', () => probe.close(() => resolve(true)))
})

const hi = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] }

let server: FakeOpenAIServer | undefined
let plain: Server | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
  plain?.closeAllConnections()
  await new Promise((resolve) => (plain ? plain.close(resolve) : resolve(undefined)))
  plain = undefined
})

/** A loopback server answering every request with `respond`; returns its base URL. */
async function serve(respond: Parameters<typeof createServer>[1]): Promise<string> {
  plain = createServer(respond)
  await new Promise<void>((resolve) => plain!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(plain.address() as { port: number }).port}/v1`
}

const completion = (content: string) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  })

describe('model-openai transport (node:http with a pooled keep-alive agent)', () => {
  it('reports a redirect as MODEL_HTTP naming where it points, without following or retrying it', async () => {
    server = await startFakeOpenAI([{ status: 307, message: 'moved', headers: { location: 'https://api.example.com/v1/chat/completions' } }])
    const { model, dispose } = await loadModel(server.baseURL)
    const error = await failure(model.stream(hi))
    expect([error.code, error.status, error.attempts]).toEqual(['MODEL_HTTP', 307, 1])
    expect(error.message).toBe(
      `${server.baseURL} answered 307 (a redirect to https://api.example.com/v1/chat/completions) — set baseURL to the address the API is served at; requests are not redirected`,
    )
    expect(server.requests).toHaveLength(1)
    await dispose()
  })

  it('decodes a gzip-compressed JSON answer and asks for no compression on a stream', async () => {
    const seen: Array<string | undefined> = []
    const baseURL = await serve((req, res) => {
      seen.push(req.headers['accept-encoding'])
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        res.end(gzipSync(completion('squeezed ✓')))
      })
    })
    const { model, dispose } = await loadModel(baseURL, { stream: false })
    expect(textOf(await collect(model.stream(hi)))).toBe('squeezed ✓')
    await dispose()
    const streaming = await loadModel(baseURL)
    // The server answered JSON anyway, compressed: still decoded.
    expect(textOf(await collect(streaming.model.stream(hi)))).toBe('squeezed ✓')
    await streaming.dispose()
    expect(seen).toEqual(['gzip, deflate, br', 'identity'])
  })

  it('reports a compressed body that does not decompress as MODEL_INTERRUPTED, not a crash', async () => {
    const baseURL = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        res.end('this is not gzip')
      })
    })
    const { model, dispose } = await loadModel(baseURL, { stream: false, maxRetries: 0 })
    const error = await failure(model.stream(hi))
    expect(error.code).toBe('MODEL_INTERRUPTED')
    expect(error.message).toMatch(/^the connection was lost mid-response \(Z_DATA_ERROR: /)
    await dispose()
  })

  it('streams a reply larger than the read buffer without losing or reordering bytes', async () => {
    // 3 MiB of multi-byte text in 64 KiB deltas: the reader pauses the socket above 1 MiB and resumes on read.
    const text = 'ab✓🌧'.repeat((3 * 1024 * 1024) / 9)
    server = await startFakeOpenAI([{ text, chunkSize: 64 * 1024 }])
    const { model, dispose } = await loadModel(server.baseURL)
    const events = await collect(model.stream(hi))
    expect(textOf(events)).toBe(text)
    expect(events.at(-1)).toMatchObject({ type: 'done', finishReason: 'stop' })
    await dispose()
  })

  it('keeps finished connections pooled between turns and closes them when the plugin unloads', async () => {
    server = await startFakeOpenAI([{ text: 'one' }, { text: 'two' }])
    const { model, dispose } = await loadModel(server.baseURL)
    expect(textOf(await collect(model.stream(hi)))).toBe('one')
    expect(textOf(await collect(model.stream(hi)))).toBe('two')
    expect(server.connections()).toBe(1)
    expect(server.openConnections()).toBe(1)
    await dispose()
    await expect.poll(() => server!.openConnections()).toBe(0)
  })

  it('times out and aborts a request still waiting for its response head, closing the connection each time', async () => {
    const closed: string[] = []
    const baseURL = await serve((req) => {
      req.resume()
      req.socket.once('close', () => closed.push(req.url!))
    })
    const { model, dispose } = await loadModel(baseURL, { timeoutMs: 150, maxRetries: 0 })
    const timeout = await failure(model.stream(hi))
    expect([timeout.code, timeout.message]).toEqual(['MODEL_TIMEOUT', `no response from ${baseURL} within 150 ms — raise timeoutMs or check the server`])
    await expect.poll(() => closed.length).toBe(1)
    const controller = new AbortController()
    const aborted = failure(model.stream({ ...hi, signal: controller.signal }))
    setTimeout(() => controller.abort(), 30)
    expect(await aborted).toMatchObject({ code: 'ABORTED', message: 'the model request was cancelled' })
    await expect.poll(() => closed.length).toBe(2)
    await dispose()
  })

  it('speaks HTTPS, trusting the CAs Node trusts (NODE_EXTRA_CA_CERTS), and names a certificate it cannot verify', async () => {
    const cert = fileURLToPath(new URL('fixtures/localhost-cert.pem', import.meta.url))
    const tls = createTlsServer({ cert: readFileSync(cert), key: readFileSync(new URL('fixtures/localhost-key.pem', import.meta.url)) }, (req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
        res.end(`${chunk({ content: 'over ' })}${chunk({ content: 'TLS' })}${chunk({}, 'stop')}data: [DONE]\n\n`)
      })
    })
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve))
    const baseURL = `https://127.0.0.1:${(tls.address() as { port: number }).port}/v1`
    try {
      // Not trusted by this process: a failure that names the certificate problem and the fix, not retried.
      const { model, dispose } = await loadModel(baseURL)
      const error = await failure(model.stream(hi))
      expect([error.code, error.attempts]).toEqual(['MODEL_UNREACHABLE', 1])
      expect(error.message).toBe(
        `cannot verify the TLS certificate of ${baseURL} (DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate) — if the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate`,
      )
      await dispose()
      // A process that trusts it (as a user behind a corporate CA would set up) streams over it.
      const client = `const { OpenAIClient, resolveOptions } = await import(${JSON.stringify(new URL('../src/index.ts', import.meta.url).href)})
        const client = new OpenAIClient(resolveOptions({ baseURL: ${JSON.stringify(baseURL)}, maxRetries: 0, timeoutMs: 10000, backoffMs: 1, maxRetryDelayMs: 1, stream: true, includeUsage: false, images: 'omit', headers: {}, extraBody: {} }, {}))
        let text = ''
        for await (const event of client.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })) if (event.type === 'text') text += event.delta
        client.close()
        console.log(text)`
      const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=cordage-source', '--import', 'tsx', '--input-type=module', '-e', client], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        env: { ...process.env, NODE_EXTRA_CA_CERTS: cert },
      })
      expect(stdout.trim()).toBe('over TLS')
    } finally {
      tls.closeAllConnections()
      await new Promise((resolve) => tls.close(resolve))
    }
  })

  it.skipIf(!ipv6)('reaches an IPv6 loopback base URL', async () => {
    const v6 = createServer((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(completion('over ::1'))
      })
    })
    await new Promise<void>((resolve) => v6.listen(0, '::1', resolve))
    try {
      const { model, dispose } = await loadModel(`http://[::1]:${(v6.address() as { port: number }).port}/v1`, { stream: false })
      expect(textOf(await collect(model.stream(hi)))).toBe('over ::1')
      await dispose()
    } finally {
      v6.closeAllConnections()
      await new Promise((resolve) => v6.close(resolve))
    }
  })
})
