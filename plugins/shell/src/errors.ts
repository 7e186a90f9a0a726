import { CordageError } from '@cordage/core'

/** The shell could not be started (missing binary, not executable). */
export class ShellSpawnError extends CordageError {
  constructor(message: string) {
    super('SPAWN_FAILED', message)
  }
}

/** The requested `cwd` does not exist, is not a directory, or resolves outside the configured root. */
export class ShellCwdError extends CordageError {
  constructor(message: string) {
    super('INVALID_CWD', message)
  }
}

/** `run_in_background` was asked for but no `jobs` service is loaded. */
export class JobsUnavailableError extends CordageError {
  constructor() {
    super(
      'JOBS_UNAVAILABLE',
      'run_in_background needs the jobs service, which is not loaded; run the command in the foreground (omit run_in_background) or load @cordage/plugin-jobs',
    )
  }
}
