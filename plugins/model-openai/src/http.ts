import http from 'node:http'
import https from 'node:https'
import { pipeline, type Readable } from 'node:stream'
import zlib from 'node:zlib'

/** Bytes a reader holds before it pauses the socket until the next `read()`. */
const HIGH_WATER = 1 << 20

function connectionClosed(): Error {
  return Object.assign(new Error('the connection closed before the response ended'), { code: 'ECONNRESET' })
}

/**
 * A response body read as whatever has arrived since the last `read()`: one promise per wait, not one
 * per network chunk (the web-stream reader `fetch` hands out costs several promise hops per chunk).
 */
export class BodyReader {
  private queue: Buffer[] = []
  private queued = 0
  private ended = false
  private failure: Error | undefined
  private wake: (() => void) | undefined

  constructor(private readonly stream: Readable) {
    stream.on('data', (chunk: Buffer) => {
      this.queue.push(chunk)
      this.queued += chunk.length
      if (this.queued > HIGH_WATER) stream.pause()
      this.poke()
    })
    stream.on('end', () => {
      this.ended = true
      this.poke()
    })
    stream.on('error', (error) => {
      this.failure ??= error
      this.poke()
    })
    stream.on('close', () => {
      if (!this.ended) this.failure ??= connectionClosed()
      this.poke()
    })
  }

  /** Whether the whole body has arrived (everything left is in the queue). */
  get complete(): boolean {
    return this.ended
  }

  /** The chunks that arrived since the last call, waiting when there are none; `undefined` once the body has ended. */
  async read(): Promise<Buffer[] | undefined> {
    while (!this.queue.length && !this.ended && !this.failure)
      await new Promise<void>((resolve) => {
        this.wake = resolve
      })
    if (this.queue.length) {
      const chunks = this.queue
      this.queue = []
      this.queued = 0
      if (this.stream.isPaused()) this.stream.resume()
      return chunks
    }
    if (this.failure) throw this.failure
    return undefined
  }

  /** The rest of the body as text (UTF-8, a leading byte-order mark dropped, as `Response.text()` does). */
  async text(): Promise<string> {
    const chunks: Buffer[] = []
    for (let next = await this.read(); next; next = await this.read()) chunks.push(...next)
    return new TextDecoder().decode(Buffer.concat(chunks))
  }

  /** Stops reading: the connection is closed rather than returned to the pool. */
  cancel(error: Error = new Error('the response was cancelled')): void {
    this.failure ??= error
    this.stream.destroy(error)
    this.poke()
  }

  private poke(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }
}

/** A response's status line, headers and body. */
export interface HttpAnswer {
  status: number
  statusText: string
  /** A header's value (repeated headers joined with `, `). */
  header(name: string): string | undefined
  body: BodyReader
}

function decoded(response: http.IncomingMessage): Readable {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase()
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined
  if (!decoder) return response
  // pipeline carries a failure on either side to the other, so the reader sees it.
  return pipeline(response, decoder, () => {})
}

/** One POST in flight: `answer` settles with the response head; `destroy` cuts it at any stage. */
export class HttpRequest {
  readonly answer: Promise<HttpAnswer>
  private readonly request: http.ClientRequest
  private reader: BodyReader | undefined

  constructor(transport: HttpTransport, headers: Record<string, string>, body: string) {
    this.request = transport.send(headers, body)
    this.answer = new Promise((resolve, reject) => {
      // Kept for the request's whole life: after the head, failures surface through the body reader.
      this.request.on('error', reject)
      this.request.once('response', (response) => {
        const reader = new BodyReader(decoded(response))
        this.reader = reader
        resolve({
          status: response.statusCode ?? 0,
          statusText: response.statusMessage ?? '',
          header: (name) => {
            const value = response.headers[name.toLowerCase()]
            return Array.isArray(value) ? value.join(', ') : value
          },
          body: reader,
        })
      })
    })
    this.answer.catch(() => {})
  }

  destroy(error: Error): void {
    this.reader?.cancel(error)
    this.request.destroy(error)
  }
}

/**
 * POSTs to one URL over `node:http`/`node:https` with a keep-alive agent of its own, so connections are
 * pooled between turns and `close()` ends them all. Redirects are not followed (see the README).
 */
export class HttpTransport {
  private readonly agent: http.Agent
  private readonly options: http.RequestOptions
  private readonly request: typeof http.request

  constructor(readonly url: string) {
    const target = new URL(url)
    const secure = target.protocol === 'https:'
    this.request = secure ? https.request : http.request
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true })
    this.options = {
      protocol: target.protocol,
      // URL keeps IPv6 hosts in brackets; the socket layer wants them bare.
      hostname: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port || undefined,
      path: `${target.pathname}${target.search}`,
      method: 'POST',
      agent: this.agent,
      auth: target.username ? `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}` : undefined,
    }
  }

  send(headers: Record<string, string>, body: string): http.ClientRequest {
    const request = this.request({ ...this.options, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } })
    request.end(body)
    return request
  }

  /** Closes every pooled and in-flight connection. */
  close(): void {
    this.agent.destroy()
  }
}
