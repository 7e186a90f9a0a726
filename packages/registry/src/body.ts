import { ToolAbortedError, ToolTimeoutError, failure, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import type { AbortWait, AbortWatch } from './abort-watch.js'
import { NEVER, deferredOf, type Call } from './call.js'
import { normalize } from './normalize.js'

const promiseThen = Promise.prototype.then

/** What bodies run under: the grace period, where warnings go, and the registry's abort listeners. */
export interface BodyHost {
  readonly graceMs: number
  readonly warn: (message: string) => void
  /** Shared per signal: a call in flight adds a callback, not a listener of its own. */
  readonly aborts: AbortWatch
}

/**
 * Runs the body under the timeout and cancellation rules, then normalises its value. Once the body's
 * signal aborts, it gets `graceMs` to settle before its result is abandoned (`warn` says so). A body
 * that returns a value (not a thenable) or throws is done at once: nothing is left to race, and the
 * result is returned as it is, not in a promise.
 */
export function runBody(definition: ToolDefinition, call: Call, host: BodyHost): ToolExecutionResult | Promise<ToolExecutionResult> {
  const { exec, callerSignal } = call
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
  // Nothing can abort a call under NEVER: no timeout bookkeeping, no race. A native promise is followed
  // as `await` would (one tick); any other thenable goes through its `then`, read above.
  if (exec.signal === NEVER && body instanceof Promise && then === promiseThen) {
    return promiseThen.call(
      body,
      (value: unknown) => normalize(definition, exec, value, deferredOf(call)),
      (error: unknown) => failure(error, undefined, deferredOf(call)),
    ) as Promise<ToolExecutionResult>
  }
  return race(definition, call, host, body, then as Then)
}

type Then = (this: unknown, onValue: (value: unknown) => void, onError: (error: unknown) => void) => unknown

const VALUE = 0
const ERROR = 1
const ABANDONED = 2

/** Waits for a thenable body to settle, for at most `graceMs` once its signal aborts. */
function race(definition: ToolDefinition, call: Call, host: BodyHost, body: unknown, then: Then): Promise<ToolExecutionResult> {
  const { exec, controller, callerSignal } = call
  const timeoutMs = definition.timeoutMs
  return new Promise((resolve) => {
    let done = false
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    let graceTimer: NodeJS.Timeout | undefined
    let forward: AbortWait | undefined
    const end = (kind: typeof VALUE | typeof ERROR | typeof ABANDONED, payload?: unknown) => {
      if (done) return
      done = true
      wait?.cancel()
      forward?.cancel()
      clearTimeout(timer)
      clearTimeout(graceTimer)
      if (kind === ABANDONED) {
        const reason = timedOut ? `timed out after ${timeoutMs} ms` : 'was cancelled'
        host.warn(
          `tool "${definition.name}" (${exec.callId}) ${reason} and did not settle within ${host.graceMs} ms of its abort signal; its result is abandoned`,
        )
        resolve(failure(timedOut ? new ToolTimeoutError(timeoutMs!) : new ToolAbortedError(), undefined, deferredOf(call)))
      } else if (timedOut) resolve(failure(new ToolTimeoutError(timeoutMs!), undefined, deferredOf(call)))
      else if (kind === ERROR) resolve(failure(cancelledOr(payload, callerSignal), undefined, deferredOf(call)))
      else resolve(normalize(definition, exec, payload, deferredOf(call)))
    }
    if (controller) {
      timer = setTimeout(() => {
        timedOut = true
        controller.abort(new ToolTimeoutError(timeoutMs!))
      }, timeoutMs)
      if (callerSignal) forward = host.aborts.add(callerSignal, () => controller.abort(callerSignal.reason))
    }
    // Once the body's signal aborts, wait at most the grace period for it to settle. Registered before
    // `then` is called, which may settle at once.
    const wait =
      exec.signal === NEVER
        ? undefined
        : host.aborts.add(exec.signal, () => {
            graceTimer ??= setTimeout(() => end(ABANDONED), host.graceMs)
          })
    try {
      then.call(
        body,
        (value) => end(VALUE, value),
        (error) => end(ERROR, error),
      )
    } catch (error) {
      end(ERROR, error)
    }
  })
}

/** A body that stops because the caller cancelled was cancelled, not broken. */
function cancelledOr(error: unknown, callerSignal: AbortSignal | undefined): unknown {
  const cancelled = callerSignal?.aborted && (error === callerSignal.reason || (error as Error)?.name === 'AbortError')
  return cancelled ? new ToolAbortedError() : error
}
