import { CordageError } from '@cordage/core'

/** A policy rule is malformed (code `INVALID_CONFIG`); thrown at load, naming the rule index and field. */
export class PolicyConfigError extends CordageError {
  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}
