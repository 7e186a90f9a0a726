import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk'
import { ModelRequestError } from '@cordage/services'
import { errorMessage } from '@cordage/core'

/** Where the failure happened, for messages that name the fix. */
export interface FailureContext {
  baseURL: string
  model: string
  keyHint: string
  signal?: AbortSignal
}

/** The server's wait hint in milliseconds: `retry-after-ms`, else `Retry-After` as seconds or an HTTP date. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN)
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers?.get('retry-after')
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** `{ type, message }` of an Anthropic error body (HTTP or a stream's `error` event). */
function bodyError(error: APIError): { type?: string; message: string } {
  const inner = (error.error as any)?.error ?? error.error
  const message = typeof inner?.message === 'string' ? inner.message : error.message
  return { type: typeof inner?.type === 'string' ? inner.type : undefined, message }
}

/**
 * Maps what the SDK throws to the codes model-openai uses: 401/403 → MODEL_AUTH; a prompt over the
 * window → MODEL_CONTEXT_LENGTH; 429 (with its retry-after), 529 overload, other HTTP failures →
 * MODEL_HTTP; an `error` event mid-stream → MODEL_STREAM; timeouts, connection failures, cancellation.
 */
export function toModelError(error: unknown, context: FailureContext): ModelRequestError {
  if (error instanceof ModelRequestError) return error
  if (error instanceof APIUserAbortError || context.signal?.aborted) {
    const reason = context.signal?.reason
    const why = reason instanceof Error && reason.name !== 'AbortError' ? `: ${reason.message}` : ''
    return new ModelRequestError('ABORTED', `the model request was cancelled${why}`, { cause: reason ?? error })
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelRequestError('MODEL_TIMEOUT', `no response from ${context.baseURL} in time — raise timeoutMs or check the server`, { cause: error })
  }
  if (error instanceof APIConnectionError) {
    const cause = (error as any).cause
    return new ModelRequestError(
      'MODEL_UNREACHABLE',
      `cannot reach ${context.baseURL} (${cause?.code ?? cause?.message ?? error.message}) — check the network and ANTHROPIC_BASE_URL`,
      { cause: error },
    )
  }
  if (!(error instanceof APIError)) {
    return new ModelRequestError('MODEL_STREAM', `the Anthropic stream failed: ${errorMessage(error)}`, { cause: error })
  }
  const { type, message } = bodyError(error)
  const status = error.status
  if (status === undefined) {
    // An `event: error` after a 200: the SDK throws it while the stream is read, past its retries.
    const hint = type === 'overloaded_error' ? ' — the API is overloaded; try again shortly' : ''
    return new ModelRequestError('MODEL_STREAM', `the server reported an error mid-stream (${type ?? 'error'}): ${message}${hint}`, { cause: error })
  }
  const where = `${context.baseURL} answered ${status}`
  const requestId = error.requestID ? ` (request ${error.requestID})` : ''
  if (status === 401 || status === 403)
    return new ModelRequestError('MODEL_AUTH', `${where}: ${message}${requestId} — ${context.keyHint}`, { cause: error, status })
  if (status === 400 && /prompt is too long|context window|too many tokens/i.test(message)) {
    return new ModelRequestError('MODEL_CONTEXT_LENGTH', `${where}: ${message}${requestId} — the conversation is larger than the model's window; compact it`, {
      cause: error,
      status,
    })
  }
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500
  const hint =
    status === 404
      ? ` — check that model "${context.model}" exists and that the base URL is the API root`
      : status === 429
        ? ' — rate limited: wait, lower the request rate, or raise maxRetries'
        : status === 529 || type === 'overloaded_error'
          ? ' — the API is overloaded; try again shortly'
          : status >= 500
            ? ' — the server failed; try again later'
            : ''
  return new ModelRequestError('MODEL_HTTP', `${where}: ${message}${requestId}${hint}`, {
    cause: error,
    status,
    retryable,
    retryAfterMs: retryAfterMs(error.headers),
  })
}
