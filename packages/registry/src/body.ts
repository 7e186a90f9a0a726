import { ToolAbortedError, ToolTimeoutError, failure, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import { NEVER, deferredOf, type Call } from './call.js'
import { normalize } from './normalize.js'

type Settled = { ok: true; value: unknown } | { ok: false; error: unknown }

/**
 * Runs the body under the timeout and cancellation rules, then normalises its value. Once the body's
 * signal aborts, it gets `graceMs` to settle before its result is abandoned (`warn` says so).
 */
export async function runBody(definition: ToolDefinition, call: Call, graceMs: number, warn: (message: string) => void): Promise<ToolExecutionResult> {
  const { exec, controller, callerSignal } = call
  if (exec.signal === NEVER) {
    // Nothing can abort this call: no timeout bookkeeping, no race.
    let value: unknown
    try {
      value = await definition.execute(exec.arguments, exec)
    } catch (error) {
      return failure(error, undefined, deferredOf(call))
    }
    return normalize(definition, exec, value, deferredOf(call))
  }
  let settled: Promise<Settled>
  try {
    settled = Promise.resolve(definition.execute(exec.arguments, exec)).then(
      (value) => ({ ok: true as const, value }),
      (error) => ({ ok: false as const, error }),
    )
  } catch (error) {
    settled = Promise.resolve({ ok: false as const, error })
  }
  const signal = exec.signal
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
      callerSignal.addEventListener('abort', forward, { once: true })
      unlink = () => callerSignal.removeEventListener('abort', forward)
    }
  }
  // Once the body's signal aborts, wait at most the grace period for it to settle.
  let graceTimer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const outcome = await new Promise<Settled | 'abandoned'>((resolve) => {
    settled.then(resolve)
    onAbort = () => {
      graceTimer = setTimeout(() => resolve('abandoned'), graceMs)
    }
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
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
  if (!outcome.ok) {
    // A body that stops because the caller cancelled was cancelled, not broken.
    const cancelled = callerSignal?.aborted && (outcome.error === callerSignal.reason || (outcome.error as Error)?.name === 'AbortError')
    return failure(cancelled ? new ToolAbortedError() : outcome.error, undefined, deferredOf(call))
  }
  return normalize(definition, exec, outcome.value, deferredOf(call))
}
