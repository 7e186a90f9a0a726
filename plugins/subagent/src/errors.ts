import { CordageError } from '@cordage/core'

/** A child run could not start or did not finish; `code` says why (`SUBAGENT_DEPTH`, `SUBAGENT_FANOUT`, …). */
export class SubagentError extends CordageError {}

/** The plugin's config is invalid (code `INVALID_CONFIG`). */
export class SubagentConfigError extends CordageError {
  constructor(message: string) {
    super('INVALID_CONFIG', message)
  }
}
