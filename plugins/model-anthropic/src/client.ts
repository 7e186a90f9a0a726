import Anthropic from '@anthropic-ai/sdk'
import type { CompletionRequest, ModelEvent, ModelInfo, ModelService } from '@cordage/services'
import { ModelRequestError } from '@cordage/services'
import type { ClientOptions } from './config.js'
import { MessageFold } from './events.js'
import { toModelError } from './failures.js'
import { toWireBody, type WireOptions } from './wire.js'

/** A Cordis-free Messages API client implementing the `model` seam on the official SDK. */
export class AnthropicClient implements ModelService {
  readonly id: string
  readonly info: ModelInfo
  /** The SDK client (its retries, timeouts and error classes). */
  readonly sdk: Anthropic
  private readonly wire: WireOptions
  private readonly active = new Set<AbortController>()
  private closed: Error | undefined

  constructor(readonly options: ClientOptions) {
    this.id = `anthropic:${options.model}`
    this.info = options.info
    // Credentials are passed explicitly (null when absent), so the SDK never goes looking for profiles.
    this.sdk = new Anthropic({
      apiKey: options.apiKey ?? null,
      authToken: options.authToken ?? null,
      ...(options.baseURL && { baseURL: options.baseURL }),
      maxRetries: options.maxRetries,
      timeout: options.timeoutMs,
      defaultHeaders: options.headers,
      // The SDK traces each call itself once a tracer provider is registered; the otel plugin already does.
      ...(!options.sdkTelemetry && { openTelemetry: false as const }),
    })
    this.wire = {
      model: options.model,
      id: this.id,
      maxTokens: options.maxTokens,
      thinking: options.thinking,
      cache: options.cache,
      extraBody: options.extraBody,
    }
    if (options.temperature !== undefined) this.wire.temperature = options.temperature
  }

  /** Aborts every request in flight (`ABORTED`) and refuses new ones; used when the plugin unloads. */
  close(reason = new Error('the model client was closed')): void {
    this.closed = reason
    for (const call of this.active) call.abort(reason)
  }

  /** Streams one completion: text and thinking deltas, thinking blocks, tool calls, then one `done` with usage. */
  async *stream(request: CompletionRequest): AsyncGenerator<ModelEvent> {
    const call = new AbortController()
    const outer = request.signal
    const onAbort = () => call.abort(outer!.reason)
    if (this.closed) call.abort(this.closed)
    else if (outer?.aborted) call.abort(outer.reason)
    else outer?.addEventListener('abort', onAbort, { once: true })
    this.active.add(call)
    const context = { baseURL: this.sdk.baseURL, model: this.options.model, keyHint: this.options.keyHint, signal: call.signal }
    try {
      const body = toWireBody(request, this.wire) as unknown as Anthropic.MessageCreateParamsStreaming
      const fold = new MessageFold()
      let stream: AsyncIterable<unknown>
      try {
        stream = await this.sdk.messages.create(body, { signal: call.signal })
      } catch (error) {
        throw toModelError(error, context)
      }
      // The SDK's timeout ends with the response headers; a stream that stalls afterwards is cut here.
      const idle = this.options.idleTimeoutMs
      let last = performance.now()
      let stalled = false
      const check = () => {
        const left = last + idle - performance.now()
        if (left > 0) timer = setTimeout(check, left)
        else {
          stalled = true
          call.abort(new Error(`no stream event for ${idle} ms`))
        }
      }
      let timer = setTimeout(check, idle)
      try {
        for await (const event of stream) {
          last = performance.now()
          const modelEvent = fold.push(event)
          if (modelEvent) yield modelEvent
        }
      } catch (error) {
        throw stalled ? stallError(idle, error) : toModelError(error, context)
      } finally {
        clearTimeout(timer)
      }
      if (!fold.finished) {
        if (stalled) throw stallError(idle)
        if (call.signal.aborted) throw toModelError(call.signal.reason, context)
        throw new ModelRequestError('MODEL_INTERRUPTED', 'the stream ended before message_stop', { retryable: true })
      }
    } finally {
      this.active.delete(call)
      outer?.removeEventListener('abort', onAbort)
    }
  }
}

function stallError(idle: number, cause?: unknown): ModelRequestError {
  return new ModelRequestError('MODEL_TIMEOUT', `the stream stalled: no event for ${idle} ms — raise idleTimeoutMs or check the server`, { cause })
}
