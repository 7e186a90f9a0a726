import { CordageError } from '@cordage/core'

/** The program could not be started on a pseudo-terminal. */
export class TerminalSpawnError extends CordageError {
  constructor(message: string) {
    super('SPAWN_FAILED', message)
  }
}

/** The foreground process group could not be signalled. */
export class TerminalSignalError extends CordageError {
  constructor(message: string) {
    super('SIGNAL_FAILED', message)
  }
}

/** The requested `cwd` does not exist, is not a directory, or resolves outside the workspace root. */
export class TerminalCwdError extends CordageError {
  constructor(message: string) {
    super('INVALID_CWD', message)
  }
}

/** No session with that id (never opened, closed, or expired). */
export class UnknownSessionError extends CordageError {
  constructor(id: string, known: string[]) {
    super(
      'UNKNOWN_SESSION',
      `unknown terminal session "${id}"; ${known.length ? `open sessions: ${known.join(', ')}` : 'no session is open (start one with terminal_open)'}`,
    )
  }
}

/** The session was opened by another agent. */
export class ForeignSessionError extends CordageError {
  constructor(id: string) {
    super('FOREIGN_SESSION', `terminal session "${id}" belongs to another agent; open your own with terminal_open`)
  }
}

/** The session limit is reached. */
export class TooManySessionsError extends CordageError {
  constructor(limit: number, open: string[]) {
    super('TOO_MANY_SESSIONS', `at most ${limit} terminal sessions may be open (${open.join(', ')}); close one with terminal_close first`)
  }
}

/** A send is already waiting on this session. */
export class SendActiveError extends CordageError {
  constructor(id: string) {
    super('SEND_ACTIVE', `terminal session "${id}" already has a send in progress; wait for it to return, or interrupt it with terminal_signal`)
  }
}

/** The session's program has exited: nothing can be sent or signalled. */
export class SessionExitedError extends CordageError {
  constructor(id: string, how: string) {
    super(
      'SESSION_EXITED',
      `terminal session "${id}" has ${how}; read its last screen with terminal_read, close it with terminal_close, and open a new one to continue`,
    )
  }
}

/** `waitFor` is not a valid regular expression. */
export class InvalidPatternError extends CordageError {
  constructor(pattern: string, reason: string) {
    super('INVALID_PATTERN', `waitFor ${JSON.stringify(pattern)} is not a valid regular expression: ${reason}`)
  }
}

/** `waitFor` backtracks so much that testing it against the screen would stall the host. */
export class PatternTimeoutError extends CordageError {
  constructor(pattern: string, budgetMs: number, characters: number) {
    super(
      'INVALID_PATTERN',
      `waitFor ${JSON.stringify(pattern)} took longer than ${budgetMs} ms to test against ${characters} characters of the terminal and was stopped: it backtracks catastrophically (nested or overlapping repetition such as (a+)+ or (.*)*); use a simpler pattern`,
    )
  }
}

/** An `env` entry has a name that is not a variable name, or a value that cannot be passed. */
export class InvalidEnvError extends CordageError {
  constructor(message: string) {
    super('INVALID_ENV', message)
  }
}

/** `run_in_background` without the jobs service. */
export class JobsUnavailableError extends CordageError {
  constructor() {
    super(
      'JOBS_UNAVAILABLE',
      'run_in_background needs the jobs service, which is not loaded; send in the foreground (omit run_in_background) or load @cordage/plugin-jobs',
    )
  }
}
