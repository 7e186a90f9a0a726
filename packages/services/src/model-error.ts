import { CordageError } from '@cordage/core'

/**
 * The stable codes a model provider's failure carries; route on these, never on the message.
 * `MODEL_CONTEXT_LENGTH` is a request larger than the model's window (the agent compacts and retries once).
 */
export type ModelRequestErrorCode =
  'MODEL_AUTH' | 'MODEL_UNREACHABLE' | 'MODEL_HTTP' | 'MODEL_CONTEXT_LENGTH' | 'MODEL_STREAM' | 'MODEL_INTERRUPTED' | 'MODEL_TIMEOUT' | 'ABORTED'

/**
 * A model request failed, whichever provider made it; `status` is the HTTP status when the server
 * answered, `attempts` how many were made.
 */
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
