import type { CompletionRequest, ModelEvent, ModelService } from '@cordage/agent'
import { ChunkAssembler, completionEvents } from './assemble.js'
import { ModelRequestError } from './errors.js'
import { httpError, networkError, readError } from './failures.js'
import { SseParser } from './sse.js'
import { toWireBody, type WireOptions } from './wire.js'

/** Everything the client needs, resolved from config and environment. */
export interface ClientOptions extends WireOptions {
  baseURL: string
  apiKey?: string
  /** What to tell the user when the key is rejected or missing. */
  keyHint: string
  headers: Record<string, string>
  maxRetries: number
  timeoutMs: number
  backoffMs: number
  maxRetryDelayMs: number
}

function abortError(signal: AbortSignal): ModelRequestError {
  const reason = signal.reason
  const why = reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : ''
  return new ModelRequestError('ABORTED', `the model request was cancelled${why}`, { cause: reason })
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal))
    const onAbort = () => { clearTimeout(timer); reject(abortError(signal!)) }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch (cause) {
    throw new ModelRequestError('MODEL_STREAM', `the server sent a malformed stream chunk (not JSON): ${data.slice(0, 200)} — the server is not speaking the Chat Completions stream format; check baseURL, or set stream: false`, { cause })
  }
}

/**
 * Reads past `[DONE]` to the end of the response so the keep-alive connection goes back to the pool;
 * cancelling an unfinished body would close the socket. A server that never ends it is cut off after 1 s.
 */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  const timer = setTimeout(() => { reader.cancel().catch(() => {}) }, 1000)
  try {
    while (!(await reader.read()).done) { /* ignore anything after [DONE] */ }
  } catch {
    // The response is already complete for the caller; a late failure changes nothing.
  } finally {
    clearTimeout(timer)
  }
}

/** A Cordis-free Chat Completions client implementing the `model` seam (streaming, tool calls, retries). */
export class OpenAIClient implements ModelService {
  readonly id: string
  private readonly url: string
  private readonly headers: Record<string, string>

  constructor(readonly options: ClientOptions) {
    this.id = `openai:${options.model}`
    this.url = `${options.baseURL.replace(/\/+$/, '')}/chat/completions`
    this.headers = {
      'content-type': 'application/json',
      accept: options.stream ? 'text/event-stream' : 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      ...options.headers,
    }
  }

  /** One controller per `stream` call in flight, so `close()` can stop them all. */
  private readonly active = new Set<AbortController>()
  private closed: Error | undefined

  /** Aborts every request in flight (`ABORTED`) and refuses new ones; used when the plugin unloads. */
  close(reason = new Error('the model client was closed')): void {
    this.closed = reason
    for (const call of this.active) call.abort(reason)
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
      const body = JSON.stringify(toWireBody(request, this.options))
      const { maxRetries, backoffMs, maxRetryDelayMs } = this.options
      for (let attempt = 1; ; attempt++) {
        let yielded = false
        try {
          for await (const event of this.attempt(body, call.signal)) {
            yielded = true
            yield event
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

  private async *attempt(body: string, signal: AbortSignal | undefined): AsyncGenerator<ModelEvent> {
    if (signal?.aborted) throw abortError(signal)
    const { baseURL, timeoutMs } = this.options
    const controller = new AbortController()
    const onAbort = () => controller.abort(signal!.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    let timedOut = false
    let completed = false
    let timer: NodeJS.Timeout | undefined
    const arm = () => { timer = setTimeout(() => { timedOut = true; controller.abort() }, timeoutMs) }
    const disarm = () => clearTimeout(timer)
    try {
      let response: Response
      arm()
      try {
        response = await fetch(this.url, { method: 'POST', headers: this.headers, body, signal: controller.signal })
      } catch (error) {
        throw signal?.aborted ? abortError(signal) : networkError(error, { baseURL, timedOut, timeoutMs })
      } finally {
        disarm()
      }
      if (!response.ok) {
        arm()
        try { throw await httpError(response, this.options) } finally { disarm() }
      }
      const type = response.headers.get('content-type') ?? ''
      if (!this.options.stream || type.includes('application/json')) {
        arm()
        let text: string
        try { text = await response.text() } catch (error) {
          throw signal?.aborted ? abortError(signal) : readError(error, { timedOut, timeoutMs })
        } finally { disarm() }
        completed = true
        yield* completionEvents(parseChunk(text))
        return
      }
      if (type && !type.includes('text/event-stream')) {
        const sample = (await response.text().catch(() => '')).slice(0, 200)
        throw new ModelRequestError('MODEL_STREAM', `expected an event stream from ${this.url} but got ${type}: ${sample} — check that baseURL points at the API (it usually ends in /v1)`)
      }
      yield* this.read(response.body!, () => { arm() }, disarm, () => (signal?.aborted ? abortError(signal) : undefined), () => timedOut)
      completed = true
    } finally {
      disarm()
      signal?.removeEventListener('abort', onAbort)
      // Releases the connection when the consumer stopped early or a read failed; a finished body is left
      // alone so its keep-alive socket returns to the pool.
      if (!completed) controller.abort()
    }
  }

  private async *read(body: ReadableStream<Uint8Array>, arm: () => void, disarm: () => void, aborted: () => ModelRequestError | undefined, timedOut: () => boolean): AsyncGenerator<ModelEvent> {
    const reader = body.getReader()
    const decoder = new TextDecoder()
    const parser = new SseParser()
    const assembler = new ChunkAssembler()
    const { timeoutMs } = this.options
    let finished = false
    let eof = false
    try {
      while (!finished) {
        let chunk: { done: boolean; value?: Uint8Array }
        arm()
        try { chunk = await reader.read() } catch (error) {
          throw aborted() ?? readError(error, { timedOut: timedOut(), timeoutMs })
        } finally { disarm() }
        eof = chunk.done
        const events = chunk.done ? parser.push(decoder.decode()).concat(parser.end()) : parser.push(decoder.decode(chunk.value, { stream: true }))
        for (const event of events) {
          if (event.data === '[DONE]') { finished = true; break }
          const text = assembler.push(parseChunk(event.data))
          if (text) yield { type: 'text', delta: text }
        }
        if (chunk.done && !finished) {
          // A finish_reason without [DONE] is complete enough (some servers omit it); nothing at all is a cut stream.
          if (assembler.finishReason) break
          throw new ModelRequestError('MODEL_INTERRUPTED', 'the connection closed before the stream finished (no finish_reason and no [DONE])', { retryable: true })
        }
      }
      const closing = assembler.finish()
      if (!eof) await drain(reader)
      yield* closing
    } finally {
      reader.cancel().catch(() => {})
    }
  }
}
