import { ToolArgsError, ToolDeniedError, errorMessage, formatViolations, type CordageError, type JsonValue, type ToolExec } from '@cordage/core'
import type { Entry } from './call.js'
import { describe, violationsOf } from './normalize.js'
import type { PreDecision, ToolGuard } from './types.js'

// The admission rules, as pure functions of what the listeners answered: a call is admitted only when
// its arguments match `parameters`, pre-execute allows (or an approver allows an `ask`) and no guard denies.

/** `INVALID_ARGS` listing every violation of the tool's `parameters`, or `undefined` when they match. */
export function checkArguments(entry: Entry, args: JsonValue): ToolArgsError | undefined {
  const name = entry.definition.name
  const violations = violationsOf(
    entry.validateArgs,
    args,
    (reason, cause) => new ToolArgsError(`the arguments of ${name} could not be validated: ${reason}`, [], { cause }),
  )
  if (violations.length) return new ToolArgsError(`invalid arguments for ${name}:\n${formatViolations(violations)}`, [...violations])
}

/** What a pre-execute answer means: a denial, a question for the approver, or admission (`undefined`). */
export function readPreDecision(decision: PreDecision | undefined): ToolDeniedError | { ask: string | undefined } | undefined {
  if (decision?.kind === 'allow') return undefined
  if (decision?.kind === 'deny') return new ToolDeniedError(decision.reason || 'denied by policy')
  if (decision?.kind === 'ask') return { ask: decision.reason }
  return new ToolDeniedError(`a pre-execute listener returned an invalid decision ${describe(decision)}`)
}

/** A failed pre-execute waterfall denies: policy fails closed. */
export function preFailure(error: unknown): ToolDeniedError {
  return new ToolDeniedError(`a pre-execute policy failed, so the call was denied: ${errorMessage(error)}`)
}

/** The denial for an `ask` given the approver's answer (`undefined`: no approval service); `undefined` when allowed. */
export function approvalDenial(reason: string | undefined, answer: 'allow' | 'deny' | undefined | { error: unknown }): ToolDeniedError | undefined {
  const why = reason ? ` (${reason})` : ''
  if (answer === undefined) return new ToolDeniedError(`approval required${why}, but no approval service is available`)
  if (typeof answer === 'object') return new ToolDeniedError(`the approval request failed, so the call was denied: ${errorMessage(answer.error)}`)
  if (answer !== 'allow') return new ToolDeniedError(`the user did not approve this call${why}`)
}

/** The first guard's denial, in registration order; a guard that throws denies. */
export function guardDenial(guards: Iterable<ToolGuard>, exec: ToolExec): CordageError | undefined {
  for (const guard of guards) {
    let reason: string | undefined
    try {
      reason = guard(exec)
    } catch (error) {
      reason = `a guard failed, so the call was denied: ${errorMessage(error)}`
    }
    if (reason !== undefined) return new ToolDeniedError(reason)
  }
}
