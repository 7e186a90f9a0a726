import { CordageError } from '@cordage/core'

/** The hooks config or settings file is malformed (code `INVALID_CONFIG`); thrown at load, naming the entry. */
export class HooksConfigError extends CordageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_CONFIG', message, options)
  }
}
