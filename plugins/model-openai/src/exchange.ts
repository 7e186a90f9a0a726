import type { ModelEvent } from '@cordage/services'
import { ChunkAssembler, completionEvents } from './assemble.js'
import { ModelRequestError } from './errors.js'
import { httpError, networkError, readError } from './failures.js'
import { HttpRequest, type BodyReader, type HttpAnswer, type HttpTransport } from './http.js'
import { SseParser, Utf8Pieces } from './sse.js'
import type { ClientOptions } from './client.js'

export function abortError(signal: AbortSignal): ModelRequestError {
  const reason = signal.reason
  const why = reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : ''
  return new ModelRequestError('ABORTED', `the model request was cancelled${why}`, { cause: reason })
}

export function parseChunk(data: string): unknown {
  try {
    return JSON.parse(data)
  } catch (cause) {
    throw new ModelRequestError(
      'MODEL_STREAM',
      `the server sent a malformed stream chunk (not JSON): ${data.slice(0, 200)} — the server is not speaking the Chat Completions stream format; check baseURL, or set stream: false`,
      { cause },
    )
  }
}

/**
 * An idle timeout: it fires once it has been armed for `ms` without a `disarm()`. One timer per request,
 * re-aimed only when it fires early, instead of a `setTimeout`/`clearTimeout` pair for every read.
 */
class IdleTimer {
  private timer: NodeJS.Timeout | undefined
  private armed = false
  private deadline = 0

  constructor(
    private readonly ms: number,
    private readonly onExpire: () => void,
  ) {}

  arm(): void {
    this.armed = true
    this.deadline = performance.now() + this.ms
    this.timer ??= setTimeout(this.check, this.ms)
  }

  disarm(): void {
    this.armed = false
  }

  stop(): void {
    this.armed = false
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private readonly check = (): void => {
    this.timer = undefined
    if (!this.armed) return
    const left = this.deadline - performance.now()
    if (left > 0) this.timer = setTimeout(this.check, Math.ceil(left))
    else this.onExpire()
  }
}

/**
 * One HTTP attempt of a completion: `open()` sends the request and checks the answer, then each `next()`
 * turns what arrived since the last read into the events it completes (`undefined` once the response is
 * over), and `close()` releases everything; a response not read to its end has its connection closed.
 */
export class Exchange {
  private readonly timer: IdleTimer
  private readonly onAbort = () => this.cut(this.signal.reason instanceof Error ? this.signal.reason : new Error('aborted'))
  private timedOut = false
  private completed = false
  private request: HttpRequest | undefined
  private body: BodyReader | undefined
  private readonly decoder = new Utf8Pieces()
  private readonly parser = new SseParser()
  private readonly assembler = new ChunkAssembler()
  /** Events ready before the first read (a non-streaming answer). */
  private ready: ModelEvent[] | undefined
  /** A failure found after some events of the same read; thrown by the next `next()`. */
  private failure: unknown

  constructor(
    private readonly options: ClientOptions,
    private readonly transport: HttpTransport,
    private readonly headers: Record<string, string>,
    private readonly payload: string,
    private readonly signal: AbortSignal,
  ) {
    this.timer = new IdleTimer(options.timeoutMs, () => {
      this.timedOut = true
      this.cut(new Error(`no data for ${options.timeoutMs} ms`))
    })
  }

  private cut(reason: Error): void {
    this.request?.destroy(reason)
  }

  async open(): Promise<void> {
    const { signal, options } = this
    if (signal.aborted) throw abortError(signal)
    this.request = new HttpRequest(this.transport, this.headers, this.payload)
    signal.addEventListener('abort', this.onAbort, { once: true })
    let response: HttpAnswer
    this.timer.arm()
    try {
      response = await this.request.answer
    } catch (error) {
      throw signal.aborted ? abortError(signal) : networkError(error, { baseURL: options.baseURL, timedOut: this.timedOut, timeoutMs: options.timeoutMs })
    } finally {
      this.timer.disarm()
    }
    const body = response.body
    if (response.status < 200 || response.status >= 300) {
      this.timer.arm()
      try {
        throw await httpError(response, options)
      } finally {
        this.timer.disarm()
      }
    }
    const type = response.header('content-type') ?? ''
    if (!options.stream || type.includes('application/json')) {
      this.timer.arm()
      let text: string
      try {
        text = await body.text()
      } catch (error) {
        throw signal.aborted ? abortError(signal) : readError(error, { timedOut: this.timedOut, timeoutMs: options.timeoutMs })
      } finally {
        this.timer.disarm()
      }
      this.completed = true
      this.ready = completionEvents(parseChunk(text))
      return
    }
    if (type && !type.includes('text/event-stream')) {
      const sample = (await body.text().catch(() => '')).slice(0, 200)
      throw new ModelRequestError(
        'MODEL_STREAM',
        `expected an event stream from ${this.transport.url} but got ${type}: ${sample} — check that baseURL points at the API (it usually ends in /v1)`,
      )
    }
    this.body = body
  }

  /** The events completed by what arrived since the last call (possibly none), or `undefined` at the end. */
  async next(): Promise<ModelEvent[] | undefined> {
    if (this.failure !== undefined) throw this.failure
    if (this.ready) {
      const events = this.ready
      this.ready = undefined
      return events
    }
    const body = this.body
    if (!body || this.completed) return undefined
    let chunks: Buffer[] | undefined
    this.timer.arm()
    try {
      chunks = await body.read()
    } catch (error) {
      throw this.signal.aborted ? abortError(this.signal) : readError(error, { timedOut: this.timedOut, timeoutMs: this.options.timeoutMs })
    } finally {
      this.timer.disarm()
    }
    const { parser, assembler } = this
    const ended = chunks === undefined
    const sse =
      chunks === undefined
        ? parser.push(this.decoder.end()).concat(parser.end())
        : parser.push(this.decoder.push(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    // The text of one read goes out as one delta: the network's granularity, not the server's chunking.
    let text = ''
    let closing: ModelEvent[] | undefined
    let failure: unknown
    let finished = false
    try {
      for (const event of sse) {
        if (event.data === '[DONE]') {
          finished = true
          break
        }
        text += assembler.push(parseChunk(event.data))
      }
      if (ended && !finished && !assembler.finishReason) {
        throw new ModelRequestError('MODEL_INTERRUPTED', 'the connection closed before the stream finished (no finish_reason and no [DONE])', {
          retryable: true,
        })
      }
      // A finish_reason without [DONE] is complete enough (some servers omit it).
      if (finished || ended) {
        closing = assembler.finish()
        if (!ended) await this.drain(body)
        this.completed = true
      }
    } catch (error) {
      failure = error
    }
    const reasoning = assembler.takeReasoning()
    const events: ModelEvent[] = reasoning ? [{ type: 'thinking', delta: reasoning }] : []
    if (text) events.push({ type: 'text', delta: text })
    if (closing) for (const event of closing) events.push(event)
    if (failure !== undefined) {
      // What arrived before the failure still reaches the caller, as it would event by event.
      if (!events.length) throw failure
      this.failure = failure
    }
    return events
  }

  /**
   * Reads past `[DONE]` to the end of the response so the keep-alive connection goes back to the pool;
   * cancelling an unfinished body would close the socket. A server that never ends it is cut off after 1 s.
   */
  private async drain(body: BodyReader): Promise<void> {
    // Already ended: the connection is back in the pool whatever is left unread.
    if (body.complete) return
    const timer = setTimeout(() => body.cancel(), 1000)
    try {
      while (await body.read()) {
        /* ignore anything after [DONE] */
      }
    } catch {
      // The response is already complete for the caller; a late failure changes nothing.
    } finally {
      clearTimeout(timer)
    }
  }

  /** Releases the timer and the listener; closes the connection unless the response was read to its end. */
  close(): void {
    this.timer.stop()
    this.signal.removeEventListener('abort', this.onAbort)
    if (!this.completed) this.request?.destroy(new Error('the response was not read to its end'))
  }
}
