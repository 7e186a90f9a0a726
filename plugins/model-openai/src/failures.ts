import { errorMessage } from '@cordage/core'
import { ModelRequestError } from './errors.js'
import type { HttpAnswer } from './http.js'

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'])

/** The server's wait hint in milliseconds: `retry-after-ms`, else `Retry-After` as seconds or an HTTP date. */
export function retryAfterMs(header: (name: string) => string | undefined): number | undefined {
  const ms = Number(header('retry-after-ms') ?? NaN)
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = header('retry-after')
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

/** The server's error text: `error.message` of an OpenAI-shaped body, else the body's start. */
async function serverMessage(response: HttpAnswer): Promise<string> {
  const text = await response.body.text().catch(() => '')
  try {
    const body = JSON.parse(text)
    const message = body?.error?.message ?? body?.message ?? body?.error
    if (typeof message === 'string' && message) return message
  } catch {}
  return text.trim().slice(0, 300) || response.statusText || '(empty body)'
}

/**
 * Classifies a non-2xx answer: 401/403 → MODEL_AUTH; 408/409/429/5xx retryable MODEL_HTTP; others MODEL_HTTP.
 * A redirect is not followed (a POST body cannot be trusted to survive one): it names where to point baseURL.
 */
export async function httpError(response: HttpAnswer, options: { baseURL: string; model: string; keyHint: string }): Promise<ModelRequestError> {
  const status = response.status
  const where = `${options.baseURL} answered ${status}`
  if (status >= 300 && status < 400) {
    const location = response.header('location')
    response.body.cancel()
    return new ModelRequestError(
      'MODEL_HTTP',
      `${where} (a redirect${location ? ` to ${location}` : ''}) — set baseURL to the address the API is served at; requests are not redirected`,
      { status },
    )
  }
  const message = await serverMessage(response)
  if (status === 401 || status === 403) {
    return new ModelRequestError('MODEL_AUTH', `${where}: ${message} — ${options.keyHint}`, { status })
  }
  if ((status === 400 || status === 413) && /maximum context length|context_length_exceeded|context window|prompt is too long/i.test(message)) {
    return new ModelRequestError('MODEL_CONTEXT_LENGTH', `${where}: ${message} — the conversation is larger than the model's window; compact it`, { status })
  }
  if (status === 404) {
    return new ModelRequestError(
      'MODEL_HTTP',
      `${where}: ${message} — check baseURL (it usually ends in /v1, e.g. http://localhost:11434/v1 for Ollama) and that model "${options.model}" exists there`,
      { status },
    )
  }
  const retryable = status === 408 || status === 409 || status === 429 || status >= 500
  const hint =
    status === 429 ? ' — rate limited: wait, lower the request rate, or raise maxRetries' : status >= 500 ? ' — the server failed; try again later' : ''
  return new ModelRequestError('MODEL_HTTP', `${where}: ${message}${hint}`, { status, retryable, retryAfterMs: retryAfterMs(response.header) })
}

function causeCode(error: unknown): string | undefined {
  let current: any = error
  for (let depth = 0; current && depth < 4; depth++, current = current.cause) {
    if (typeof current.code === 'string') return current.code
  }
  return undefined
}

function causeText(error: unknown): string {
  return errorMessage((error as { cause?: unknown })?.cause ?? error)
}

/** TLS verification failures: retrying cannot fix them. */
const CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/

/**
 * Classifies a failure before any response: refused/unresolvable → MODEL_UNREACHABLE, lost →
 * MODEL_INTERRUPTED (both retryable); an unverifiable certificate → MODEL_UNREACHABLE, not retried.
 */
export function networkError(error: unknown, context: { baseURL: string; timedOut: boolean; timeoutMs: number }): ModelRequestError {
  if (context.timedOut) {
    return new ModelRequestError('MODEL_TIMEOUT', `no response from ${context.baseURL} within ${context.timeoutMs} ms — raise timeoutMs or check the server`, {
      cause: error,
      retryable: true,
    })
  }
  const code = causeCode(error)
  if (code && CERTIFICATE.test(code)) {
    return new ModelRequestError(
      'MODEL_UNREACHABLE',
      `cannot verify the TLS certificate of ${context.baseURL} (${code}: ${causeText(error)}) — if the server uses a private CA, point NODE_EXTRA_CA_CERTS at its certificate`,
      { cause: error },
    )
  }
  if (code && UNREACHABLE.has(code)) {
    return new ModelRequestError(
      'MODEL_UNREACHABLE',
      `cannot reach ${context.baseURL} (${code}: ${causeText(error)}) — check that the server is running and that baseURL is right`,
      { cause: error, retryable: true },
    )
  }
  return new ModelRequestError('MODEL_INTERRUPTED', `the connection to ${context.baseURL} failed before a response (${code ?? 'error'}: ${causeText(error)})`, {
    cause: error,
    retryable: true,
  })
}

/** Classifies a failure while reading the body: a stall → MODEL_TIMEOUT, anything else → MODEL_INTERRUPTED. */
export function readError(error: unknown, context: { timedOut: boolean; timeoutMs: number }): ModelRequestError {
  if (context.timedOut) {
    return new ModelRequestError('MODEL_TIMEOUT', `the stream stalled: no data for ${context.timeoutMs} ms — raise timeoutMs or check the server`, {
      cause: error,
      retryable: true,
    })
  }
  return new ModelRequestError('MODEL_INTERRUPTED', `the connection was lost mid-response (${causeCode(error) ?? 'error'}: ${causeText(error)})`, {
    cause: error,
    retryable: true,
  })
}
