import { EventEmitter, getMaxListeners, setMaxListeners } from 'node:events'
import { ToolAbortedError, ToolTimeoutError, failure, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import { NEVER, deferredOf, type Call } from './call.js'
import { normalize } from './normalize.js'

const promiseThen = Promise.prototype.then

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Runs the body under the timeout and cancellation rules, then normalises its value. Once the body's
 * signal aborts, it gets `graceMs` to settle before its result is abandoned (`warn` says so). A body
 * that returns a value (not a thenable) or throws is done at once: nothing is left to race.
 */
export async function runBody(definition: ToolDefinition, call: Call, graceMs: number, warn: (message: string) => void): Promise<ToolExecutionResult> {
  const { exec, controller, callerSignal } = call
  let body: unknown
  let then: unknown
  try {
    body = definition.execute(exec.arguments, exec)
    // Read once, as `await` would: a getter on a hostile value runs one time.
    then = body !== null && (typeof body === 'object' || typeof body === 'function') ? (body as { then?: unknown }).then : undefined
  } catch (error) {
    return failure(cancelledOr(error, callerSignal), undefined, deferredOf(call))
  }
  if (typeof then !== 'function') return normalize(definition, exec, body, deferredOf(call))
  const settle = (resolve: (settled: Settled) => void) => {
    try {
      then.call(
        body,
        (value: unknown) => resolve({ ok: true, value }),
        (error: unknown) => resolve({ ok: false, error }),
      )
    } catch (error) {
      resolve({ ok: false, error })
    }
  }
  const signal = exec.signal
  if (signal === NEVER) {
    // Nothing can abort this call: no timeout bookkeeping, no race. A native promise is awaited as it
    // is (one tick, nothing allocated); any other thenable goes through its `then`, read above.
    if (body instanceof Promise && then === promiseThen) {
      let value: unknown
      try {
        value = await body
      } catch (error) {
        return failure(error, undefined, deferredOf(call))
      }
      return normalize(definition, exec, value, deferredOf(call))
    }
    return finish(definition, call, await new Promise<Settled>(settle))
  }
  const timeoutMs = definition.timeoutMs
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  let unlink: (() => void) | undefined
  if (controller) {
    timer = setTimeout(() => {
      timedOut = true
      controller.abort(new ToolTimeoutError(timeoutMs!))
    }, timeoutMs)
    if (callerSignal) {
      const forward = () => controller.abort(callerSignal.reason)
      listen(callerSignal, forward)
      unlink = () => callerSignal.removeEventListener('abort', forward)
    }
  }
  // Once the body's signal aborts, wait at most the grace period for it to settle.
  let graceTimer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const outcome = await new Promise<Settled | 'abandoned'>((resolve) => {
    settle(resolve)
    onAbort = () => {
      graceTimer = setTimeout(() => resolve('abandoned'), graceMs)
    }
    if (signal.aborted) onAbort()
    else listen(signal, onAbort)
  })
  signal.removeEventListener('abort', onAbort!)
  clearTimeout(timer)
  clearTimeout(graceTimer)
  unlink?.()
  if (outcome === 'abandoned') {
    const reason = timedOut ? `timed out after ${timeoutMs} ms` : 'was cancelled'
    warn(`tool "${definition.name}" (${exec.callId}) ${reason} and did not settle within ${graceMs} ms of its abort signal; its result is abandoned`)
    return failure(timedOut ? new ToolTimeoutError(timeoutMs!) : new ToolAbortedError(), undefined, deferredOf(call))
  }
  if (timedOut) return failure(new ToolTimeoutError(timeoutMs!), undefined, deferredOf(call))
  return finish(definition, call, outcome)
}

/** The result of a settled body: its value normalised, or its failure (a cancelled call's as `ABORTED`). */
function finish(definition: ToolDefinition, call: Call, outcome: Settled): ToolExecutionResult {
  if (!outcome.ok) return failure(cancelledOr(outcome.error, call.callerSignal), undefined, deferredOf(call))
  return normalize(definition, call.exec, outcome.value, deferredOf(call))
}

// Signals whose listener-leak warning threshold this registry lifted (see `listen`).
const lifted = new WeakSet<AbortSignal>()

/**
 * Adds a once-listener for the call in flight. Each call under a signal holds one until it settles, so
 * a turn of 11 parallel calls under one run's signal is not a leak; Node would still print "possible
 * EventTarget memory leak" at the 11th. The threshold of a signal is lifted the first time the registry
 * listens to it, unless its owner set one of its own.
 */
function listen(signal: AbortSignal, listener: () => void): void {
  if (!lifted.has(signal)) {
    lifted.add(signal)
    if (thresholdOf(signal) === EventEmitter.defaultMaxListeners) setMaxListeners(Infinity, signal)
  }
  signal.addEventListener('abort', listener, { once: true })
}

/** A signal's listener-leak threshold; Node 20's `getMaxListeners` throws for one set to 0 (no limit). */
function thresholdOf(signal: AbortSignal): number {
  try {
    return getMaxListeners(signal)
  } catch {
    return 0
  }
}

/** A body that stops because the caller cancelled was cancelled, not broken. */
function cancelledOr(error: unknown, callerSignal: AbortSignal | undefined): unknown {
  const cancelled = callerSignal?.aborted && (error === callerSignal.reason || (error as Error)?.name === 'AbortError')
  return cancelled ? new ToolAbortedError() : error
}
