import { CordageError } from '@cordage/core'

/** The stable codes a provider failure carries; route on these, never on the message. */
export type ModelRequestErrorCode = 'MODEL_AUTH' | 'MODEL_UNREACHABLE' | 'MODEL_HTTP' | 'MODEL_STREAM' | 'MODEL_INTERRUPTED' | 'MODEL_TIMEOUT' | 'ABORTED'

/** A Chat Completions request failed; `status` is the HTTP status when the server answered, `attempts` how many were made. */
export class ModelRequestError extends CordageError {
  declare readonly code: ModelRequestErrorCode
  status?: number
  attempts = 1
  /** Whether another attempt could succeed (used by the retry loop before any event was yielded). */
  retryable: boolean
  /** The server's wait hint (`retry-after-ms` / `Retry-After`) in milliseconds. */
  retryAfterMs?: number

  constructor(code: ModelRequestErrorCode, message: string, options: { cause?: unknown; status?: number; retryable?: boolean; retryAfterMs?: number } = {}) {
    super(code, message, { cause: options.cause })
    this.status = options.status
    this.retryable = options.retryable ?? false
    this.retryAfterMs = options.retryAfterMs
  }
}
