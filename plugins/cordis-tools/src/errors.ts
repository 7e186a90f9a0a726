import { CordageError } from '@cordage/core'

/** A mount, unmount or inspection failed; `code` says why (`MOUNT_SYNTAX`, `MOUNT_FAILED`, `UNKNOWN_MOUNT`, …). */
export class CordisToolError extends CordageError {}

/** Thrown by the façade when mounted code reaches for something it was not given. */
export class FacadeError extends CordageError {
  constructor(message: string) {
    super('FACADE_DENIED', message)
  }
}
