import type { TerminalSession } from './session.js'

/**
 * How long a send waits: until `pattern` matches, for exactly `ms` (`fixed`), or until the output has been
 * quiet for `quietMs` (at most `ms`; with `afterOutput`, counted from the first output only). Every mode ends early when the program exits or the call is aborted.
 */
export type WaitRequest =
  { mode: 'pattern'; pattern: RegExp; ms: number } | { mode: 'fixed'; ms: number } | { mode: 'quiet'; quietMs: number; ms: number; afterOutput?: boolean }

/** Why a wait ended, and after how long. */
export interface WaitOutcome {
  reason: 'matched' | 'quiet' | 'elapsed' | 'timeout' | 'exited' | 'aborted'
  waitedMs: number
}

/**
 * A pattern test (up to 2000 rows) may take a few milliseconds: after each, the next waits this many
 * times as long, so testing takes at most an eleventh of the time while output floods, and is immediate otherwise.
 */
const MATCH_BACKOFF = 10
/** Rows a repeated test goes back over (a pattern may span rows across the previous test's end). */
const MATCH_OVERLAP = 20

/**
 * Waits on a session's output as `request` says. `since` is the absolute row where the send began; with
 * `before` (the screen before typed input), a pattern is tested against new and changed rows once output
 * arrives, so what was already on screen cannot end the wait; without it, against the screen at once.
 */
export function waitForOutput(
  session: TerminalSession,
  since: number,
  request: WaitRequest,
  signal: AbortSignal,
  before?: Map<number, string>,
): Promise<WaitOutcome> {
  const started = Date.now()
  // Output keeps flowing while someone waits for it, however much arrives unread.
  const unwatch = session.screen.watch()
  return new Promise((resolve, reject) => {
    const timers = new Set<NodeJS.Timeout>()
    let quietTimer: NodeJS.Timeout | undefined
    let matchTimer: NodeJS.Timeout | undefined
    let nextTestAt = 0
    let testedUpTo = 0
    let settled = false
    // A wait ends with an outcome, or with the error of a pattern test that ran past its budget.
    const finish = (reason: WaitOutcome['reason'], error?: unknown) => {
      if (settled) return
      settled = true
      for (const timer of timers) clearTimeout(timer)
      clearTimeout(quietTimer)
      clearTimeout(matchTimer)
      stopParsed()
      signal.removeEventListener('abort', onAbort)
      // Report the screen as of now: output already received is parsed before the caller reads it.
      void session.screen.flush().then(() => {
        unwatch()
        session.screen.markRead()
        if (error === undefined) resolve({ reason, waitedMs: Date.now() - started })
        else reject(error)
      })
    }
    const onAbort = () => finish('aborted')
    const after = (ms: number, reason: WaitOutcome['reason']) => timers.add(setTimeout(() => finish(reason), ms))
    const test = () => {
      matchTimer = undefined
      if (settled || request.mode !== 'pattern') return
      const start = performance.now()
      let matched: boolean
      try {
        matched = session.screen.matches(since, request.pattern, before, testedUpTo - MATCH_OVERLAP)
      } catch (error) {
        return finish('aborted', error)
      }
      if (matched) return finish('matched')
      testedUpTo = session.screen.scrollbackEnd()
      nextTestAt = performance.now() + (performance.now() - start) * MATCH_BACKOFF
    }
    const stopParsed = session.screen.onParsed(() => {
      if (request.mode === 'quiet') {
        clearTimeout(quietTimer)
        quietTimer = setTimeout(() => finish('quiet'), request.quietMs)
      } else if (request.mode === 'pattern' && matchTimer === undefined) {
        const delay = nextTestAt - performance.now()
        // Test at once unless backing off from an expensive test during a flood.
        if (delay <= 0) test()
        else matchTimer = setTimeout(test, delay)
      }
    })
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) return onAbort()
    after(request.ms, request.mode === 'fixed' ? 'elapsed' : 'timeout')
    // A starting program may be silent for a while (python loads its modules): then quiet begins at its first output.
    if (request.mode === 'quiet' && !request.afterOutput) quietTimer = setTimeout(() => finish('quiet'), request.quietMs)
    void session.ended.then(() => finish('exited'))
    if (!before) test()
  })
}
