import { CordageError } from '@cordage/core'

/** A spill file could not be written (code `SPILL_FAILED`); the generic policy logs it and keeps the content. */
export class SpillStoreError extends CordageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SPILL_FAILED', message, options)
  }
}

/** The plugin config is inconsistent (code `INVALID_CONFIG`); thrown at load. */
export class SpillConfigError extends CordageError {
  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}
