import { CordageError } from '@cordage/core'

/** A queue operation was refused or failed; route on `code`. */
export class QueueError extends CordageError {
  declare readonly code: 'INVALID_QUEUE_CONFIG' | 'INVALID_RUN' | 'QUEUE_UNAVAILABLE' | 'QUEUE_CLOSED' | 'RUN_NOT_KEPT'
}
