import { CordageError } from '@cordage/core'

/**
 * A session file cannot be read (`SESSION_NOT_FOUND`), is malformed beyond a torn last line (`SESSION_CORRUPT`)
 * or refused an event (`SESSION_WRITE_FAILED`: a full disk, a size limit; the event is not kept).
 */
export class SessionError extends CordageError {
  declare readonly code: 'SESSION_NOT_FOUND' | 'SESSION_CORRUPT' | 'SESSION_CLOSED' | 'INVALID_SESSION_ID' | 'SESSION_WRITE_FAILED'
}

/** The agent has no `model` service and none was passed in its options. */
export class NoModelError extends CordageError {
  constructor() {
    super('NO_MODEL', 'no model service: load a model plugin (e.g. @cordage/plugin-model-openai) or pass `model` in the agent options')
  }
}

/** The model stream failed or broke the `ModelEvent` protocol; `cause` holds the provider's error. */
export class ModelError extends CordageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MODEL_ERROR', message, options)
  }
}
