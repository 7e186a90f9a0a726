/** A developer-facing failure of the command line: printed without a stack, exits with `exitCode`. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message)
    this.name = 'CliError'
  }
}

/** Exit codes: 0 success, 1 the work failed (a failed tool call, a failed run), 2 usage or configuration error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const

export { errorMessage } from '@cordage/core'
