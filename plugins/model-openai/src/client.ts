import type { CompletionRequest, ModelEvent, ModelInfo, ModelService } from '@cordage/services'
import { ModelRequestError } from './errors.js'
import { abortError, Exchange } from './exchange.js'
import { HttpTransport } from './http.js'
import { toWireBody, type WireOptions } from './wire.js'

/** Everything the client needs, resolved from config and environment. */
export interface ClientOptions extends Omit<WireOptions, 'id'> {
  baseURL: string
  apiKey?: string
  /** What to tell the user when the key is rejected or missing. */
  keyHint: string
  headers: Record<string, string>
  maxRetries: number
  timeoutMs: number
  backoffMs: number
  maxRetryDelayMs: number
  /** The model's window and price, as built in or configured. */
  info: ModelInfo
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal))
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortError(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** A Cordis-free Chat Completions client implementing the `model` seam (streaming, tool calls, retries). */
export class OpenAIClient implements ModelService {
  readonly id: string
  readonly info: ModelInfo
  private readonly transport: HttpTransport
  private readonly headers: Record<string, string>

  constructor(readonly options: ClientOptions) {
    this.id = `openai:${options.model}`
    this.info = options.info
    this.transport = new HttpTransport(`${options.baseURL.replace(/\/+$/, '')}/chat/completions`)
    this.headers = {
      'content-type': 'application/json',
      accept: options.stream ? 'text/event-stream' : 'application/json',
      // A compressing proxy may hold back a stream's small pieces; a whole JSON answer may be compressed.
      'accept-encoding': options.stream ? 'identity' : 'gzip, deflate, br',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      ...options.headers,
    }
  }

  /** One controller per `stream` call in flight, so `close()` can stop them all. */
  private readonly active = new Set<AbortController>()
  private closed: Error | undefined

  /** Aborts every request in flight (`ABORTED`), closes pooled connections and refuses new requests; used when the plugin unloads. */
  close(reason = new Error('the model client was closed')): void {
    this.closed = reason
    for (const call of this.active) call.abort(reason)
    this.transport.close()
  }

  /** Streams one completion; retries 408/409/429/5xx, timeouts and network failures until an event was yielded. */
  async *stream(request: CompletionRequest): AsyncGenerator<ModelEvent> {
    // The caller's signal and close() both end up here; a listener, not AbortSignal.any, so nothing accumulates.
    const call = new AbortController()
    const outer = request.signal
    const onAbort = () => call.abort(outer!.reason)
    if (this.closed) call.abort(this.closed)
    else if (outer?.aborted) call.abort(outer.reason)
    else outer?.addEventListener('abort', onAbort, { once: true })
    this.active.add(call)
    try {
      const body = JSON.stringify(toWireBody(request, { ...this.options, id: this.id }))
      const { maxRetries, backoffMs, maxRetryDelayMs } = this.options
      for (let attempt = 1; ; attempt++) {
        let yielded = false
        try {
          // One generator for the whole request: events are handed over per network read, not through
          // nested generators (each layer costs promise hops for every event).
          const exchange = new Exchange(this.options, this.transport, this.headers, body, call.signal)
          try {
            await exchange.open()
            for (let events = await exchange.next(); events; events = await exchange.next()) {
              for (const event of events) {
                yielded = true
                yield event
              }
            }
          } finally {
            exchange.close()
          }
          return
        } catch (error) {
          if (!(error instanceof ModelRequestError)) throw error
          error.attempts = attempt
          if (error.code === 'ABORTED' || yielded || !error.retryable || attempt > maxRetries) {
            if (attempt > 1) error.message += ` (gave up after ${attempt} attempts; maxRetries is ${maxRetries})`
            throw error
          }
          const backoff = backoffMs * 2 ** (attempt - 1) * (0.75 + Math.random() * 0.5)
          await sleep(Math.min(error.retryAfterMs ?? backoff, maxRetryDelayMs), call.signal)
        }
      }
    } finally {
      this.active.delete(call)
      outer?.removeEventListener('abort', onAbort)
    }
  }
}
