import { CordageError } from '@cordage/core'

/** A developer-facing failure of the command line: printed without a stack, exits with `exitCode`. */
export class CliError extends CordageError {
  constructor(
    message: string,
    readonly exitCode = 2,
    code = 'CLI_USAGE',
  ) {
    super(code, message)
  }
}

/** cordage.yml (or a plugin's config in it) is invalid: code `INVALID_CONFIG`, exit 2. */
export class CliConfigError extends CliError {
  constructor(message: string) {
    super(message, 2, 'INVALID_CONFIG')
  }
}

/** Exit codes: 0 success, 1 the work failed (a failed tool call, a failed run), 2 usage or configuration error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

export { errorMessage } from '@cordage/core'
