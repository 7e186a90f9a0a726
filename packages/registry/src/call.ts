import {
  ToolArgsError,
  errorMessage,
  toJsonValue,
  type CordageError,
  type HookContext,
  type JsonValue,
  type ToolAnnotations,
  type ToolDefinition,
  type ToolExec,
  type ToolRunContext,
  type Validator,
} from '@cordage/core'
import { describe } from './normalize.js'
import type { ExecuteInput } from './types.js'

/** A registered tool with its argument validator, compiled once at registration. */
export interface Entry {
  definition: ToolDefinition
  validateArgs: Validator
  /** A frozen copy of the definition's annotations, as checked at registration (what `list()` shows). */
  annotations?: Readonly<ToolAnnotations>
}

/** One call's state, shared by every phase of the pipeline. */
export interface Call {
  readonly exec: ToolRunContext
  /** The caller's signal (the body's signal is `exec.signal`, which a timeout may abort first). */
  readonly callerSignal: AbortSignal | undefined
  /** Set when the tool declares `timeoutMs`: aborting it aborts the body. */
  readonly controller: AbortController | undefined
  /** Contexts the body queued with `exec.deferContext`, in order. */
  readonly deferred: HookContext[]
  /** Why the call cannot run, found while reading the input (bad arguments or signal). */
  readonly inputError: CordageError | undefined
}

/** The signal of a call nothing can abort. */
export const NEVER: AbortSignal = new AbortController().signal
let callCounter = 0

/** A tool name for messages and `exec.name`: a non-string name is described, never `String()`ed (its `toString` may throw). */
export function nameOf(name: unknown): string {
  return typeof name === 'string' ? name : describe(name)
}

/** Snapshots the input into a fresh frozen `exec` view; never throws. */
export function openCall(input: ExecuteInput, entry: Entry | undefined): Call {
  const name = nameOf(input.name)
  let args: JsonValue = null
  let inputError: CordageError | undefined
  try {
    args = toJsonValue(input.arguments, { freeze: true })
  } catch (error) {
    inputError = new ToolArgsError(`the arguments are not JSON: ${errorMessage(error)}`, [], { cause: error })
  }
  let callerSignal = input.signal
  if (callerSignal !== undefined && !(callerSignal instanceof AbortSignal)) {
    inputError ??= new ToolArgsError(`the call's signal must be an AbortSignal, got ${describe(callerSignal)}`)
    callerSignal = undefined
  }
  const timeoutMs = entry?.definition.timeoutMs
  const controller = timeoutMs !== undefined ? new AbortController() : undefined
  const deferred: HookContext[] = []
  const exec: { -readonly [K in keyof ToolRunContext]: ToolRunContext[K] } = {
    token: Symbol(name),
    callId: input.callId ?? `call_${(++callCounter).toString(36)}`,
    name,
    arguments: args,
    signal: controller?.signal ?? callerSignal ?? NEVER,
    deferContext: (context) => void deferred.push(Object.freeze({ source: String(context.source), text: String(context.text) })),
  }
  if (input.parent !== undefined) exec.parent = input.parent
  if (input.agent !== undefined) exec.agent = input.agent
  Object.freeze(exec)
  return { exec, callerSignal, controller, deferred, inputError }
}

/** A copy of the contexts the body queued so far, or `undefined` when there are none. */
export function deferredOf(call: Call): HookContext[] | undefined {
  return call.deferred.length ? [...call.deferred] : undefined
}

/** A frozen `exec` for a call that is only checked, never run (`wouldDeny`); a message when the arguments are not JSON. */
export function probeExec(input: Omit<ExecuteInput, 'callId' | 'signal'>): ToolExec | string {
  const name = nameOf(input.name)
  let args: JsonValue
  try {
    args = toJsonValue(input.arguments, { freeze: true })
  } catch (error) {
    return `the arguments are not JSON: ${errorMessage(error)}`
  }
  const exec: { -readonly [K in keyof ToolExec]: ToolExec[K] } = {
    token: Symbol(name),
    callId: `check_${(++callCounter).toString(36)}`,
    name,
    arguments: args,
    signal: NEVER,
  }
  if (input.parent !== undefined) exec.parent = input.parent
  if (input.agent !== undefined) exec.agent = input.agent
  return Object.freeze(exec)
}
