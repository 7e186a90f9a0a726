import { constants } from 'node:os'

/** The signals that end a command the way Ctrl-C does: stop the work, kill its processes, close the session. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** One of {@link STOP_SIGNALS}. */
export type StopSignal = (typeof STOP_SIGNALS)[number]

/** The exit code of a command stopped by `signal`: 128 + its number, as shells report it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0)
}

/** The `session/end` of a run stopped by `signal`. */
export function stoppedBy(signal: NodeJS.Signals): { reason: 'aborted'; message: string } {
  return { reason: 'aborted', message: `stopped by ${signal}` }
}

/**
 * Handles SIGINT, SIGTERM and SIGHUP while a command runs (each replaces Node's default of dying on the
 * spot, which would leave the tools' process trees running and the session without its end).
 * `onSignal` gets the signal and whether an earlier one already stopped the command; it returns `false`
 * when the signal did not stop the command (Ctrl-C in chat stops only the running turn).
 */
export class StopSignals {
  /** The first signal that stopped the command, if any. */
  first: StopSignal | undefined
  private readonly handlers = new Map<StopSignal, () => void>()

  constructor(onSignal: (signal: StopSignal, again: boolean) => boolean | void) {
    for (const signal of STOP_SIGNALS) {
      const handler = () => {
        // After a hangup the terminal is gone: writes to it fail, and must not become uncaught errors.
        if (signal === 'SIGHUP') muteBrokenOutput()
        if (onSignal(signal, this.first !== undefined) !== false) this.first ??= signal
      }
      this.handlers.set(signal, handler)
      process.on(signal, handler)
    }
  }

  /** The exit code a stopped command returns instead of `code` (unchanged when no signal came). */
  exitCode(code: number): number {
    return this.first ? signalExitCode(this.first) : code
  }

  /** Removes the handlers (Node's defaults apply again). */
  dispose(): void {
    for (const [signal, handler] of this.handlers) process.off(signal, handler)
    this.handlers.clear()
  }
}

let muted = false
function muteBrokenOutput(): void {
  if (muted) return
  muted = true
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {})
}
