import type { TerminalSession } from './session.js'

/**
 * How long a send waits: until `pattern` matches, for exactly `ms` (`fixed`), or until the output has been
 * quiet for `quietMs` (at most `ms`; with `afterOutput`, counted from the first output only). Every mode ends early when the program exits or the call is aborted.
 */
export type WaitRequest =
  | { mode: 'pattern'; pattern: RegExp; ms: number }
  | { mode: 'fixed'; ms: number }
  | { mode: 'quiet'; quietMs: number; ms: number; afterOutput?: boolean }

/** Why a wait ended, and after how long. */
export interface WaitOutcome {
  reason: 'matched' | 'quiet' | 'elapsed' | 'timeout' | 'exited' | 'aborted'
  waitedMs: number
}

/** Pattern tests run at most this often while output streams in (each scans up to 2000 rows). */
const MATCH_INTERVAL_MS = 25

/** Waits on a session's output as `request` says; `since` is the absolute row where the send began. */
export function waitForOutput(session: TerminalSession, since: number, request: WaitRequest, signal: AbortSignal, testNow = false): Promise<WaitOutcome> {
  const started = Date.now()
  return new Promise((resolve) => {
    const timers = new Set<NodeJS.Timeout>()
    let quietTimer: NodeJS.Timeout | undefined
    let matchTimer: NodeJS.Timeout | undefined
    let settled = false
    const finish = (reason: WaitOutcome['reason']) => {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      clearTimeout(quietTimer)
      clearTimeout(matchTimer)
      stopParsed()
      signal.removeEventListener('abort', onAbort)
      // Report the screen as of now: output already received is parsed before the caller reads it.
      void session.screen.flush().then(() => resolve({ reason, waitedMs: Date.now() - started }))
    }
    const onAbort = () => finish('aborted')
    const after = (ms: number, reason: WaitOutcome['reason']) => timers.add(setTimeout(() => finish(reason), ms))
    const test = () => {
      matchTimer = undefined
      if (request.mode === 'pattern' && session.screen.matches(since, request.pattern)) finish('matched')
    }
    const stopParsed = session.screen.onParsed(() => {
      if (request.mode === 'quiet') {
        clearTimeout(quietTimer)
        quietTimer = setTimeout(() => finish('quiet'), request.quietMs)
      } else if (request.mode === 'pattern') {
        matchTimer ??= setTimeout(test, MATCH_INTERVAL_MS)
      }
    })
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) return onAbort()
    after(request.ms, request.mode === 'fixed' ? 'elapsed' : 'timeout')
    // A starting program may be silent for a while (python loads its modules): then quiet begins at its first output.
    if (request.mode === 'quiet' && !request.afterOutput) quietTimer = setTimeout(() => finish('quiet'), request.quietMs)
    void session.ended.then(() => finish('exited'))
    if (testNow) test()
  })
}
