import type { MessagePort } from 'node:worker_threads'
import { failure, type JsonValue } from '@cordage/core'
import type { CodeRunFailureKind } from './errors.js'
import type { SandboxLimits } from './budget.js'

/**
 * The host ↔ program protocol. Three parties: the host (this thread: pool, scheduler, watchdog), the
 * worker thread (`worker.js`, which owns the QuickJS module) and the program inside QuickJS (whose side
 * is `prelude.js`). Everything that crosses into the VM is a string the VM parses itself, and
 * everything that leaves it is a string the host parses itself.
 *
 * A run: host `run` → worker evaluates and pumps the program until it settles or waits for calls →
 * `wait` (the calls it queued) → host dispatches, answers with `settle` (completions) → … → `done`.
 * The host may end a waiting run with `end` (answered by `ended`) or stop a busy one by terminating
 * the worker. Logs and the CPU meter live in shared memory, so they survive a terminated worker.
 *
 * Waking a sleeping thread is slow on a virtual machine (the README's Performance), for the waker and
 * the woken alike, and a nested tool call is a round trip. So each side waits for a quick answer by
 * spinning briefly on shared memory before it sleeps (`channel.js`): the worker on the doorbell, the
 * host on a control word, in which case the worker hands its reply over in a shared mailbox instead
 * of posting it.
 */

/** What a worker is started with. */
export interface WorkerData {
  /** The QuickJS `WebAssembly.Module`, compiled once in the host and instantiated by each worker. */
  wasmModule: object
  limits: SandboxLimits
  /** Log lines of the current run (layout in output.ts). */
  logBuffer: SharedArrayBuffer
  /** CPU meter of the current run (layout in budget.ts). */
  meterBuffer: SharedArrayBuffer
  /** Where the host's messages arrive (read synchronously by the worker). */
  inbox: MessagePort
  /** `CONTROL_SLOTS` Int32 slots (channel.js): the doorbell the worker sleeps on, and the mailbox handshake. */
  controlBuffer: SharedArrayBuffer
  /** The mailbox the worker hands a reply to a spinning host in (UTF-8 JSON). */
  upBuffer: SharedArrayBuffer
  /** The mailbox call completions reach the worker in (UTF-8 JSON). */
  downBuffer: SharedArrayBuffer
  /** How long the worker spins for the host's answer before it sleeps (0: never); `workerWindow` of the config's `spinMicros`. */
  spinMicros: number
  /** Whether per-call crossings may use the QuickJS build's entry points directly (`lane.js`); false only in tests of the fallback. */
  rawLane: boolean
}

/**
 * Host → worker. `tools` and `hostFunctions` are JSON arrays of names to bind. `open` starts a session
 * instead of a run (worker-session.js): a persistent context whose `invoke`s (async function bodies,
 * numbered by the host) may overlap; each step may use `stepMs` of CPU; `end` closes it.
 */
export type HostMessage =
  | { type: 'run'; code: string; tools: string; hostFunctions: string }
  | { type: 'open'; hostFunctions: string; stepMs: number; setup?: string }
  | { type: 'invoke'; id: number; code: string; file?: string }
  /** `took`: µs the host spent between the worker's `wait` and this answer (the tools' time); the worker spins only after quick ones. */
  | { type: 'settle'; completions: string[]; took: number }
  | { type: 'end' }

/** Why a run failed. From the worker, an empty `detail` means a breached limit the host words. */
export interface RunFailure {
  kind: CodeRunFailureKind
  detail: string
}

/** Worker → host. `heapBytes` is the worker's WASM memory after the run (the pool recycles big ones). */
export type WorkerMessage =
  | { type: 'ready' }
  /** `took`: µs the worker spent on the last `settle` before this (running the program); the host spins only after quick ones. */
  | { type: 'wait'; calls: string; took: number }
  | { type: 'done'; result?: string; failure?: RunFailure; heapBytes: number; reusable: boolean }
  | { type: 'ended'; heapBytes: number; reusable: boolean }
  /**
   * A session's reply to each `open`, `invoke` and `settle`: the host function calls queued, the
   * invocations settled (`<id>\n1<value JSON>`, `<id>\n1` for undefined, or `<id>\n0<description>`), and
   * the console lines since the last reply. A session that breached a limit replies `done` with the failure.
   */
  | { type: 'progress'; calls: string; settled: string[]; logs: string[] }

/** One call the program queued: its id, what to call, and the arguments' JSON text. */
export interface QueuedCall {
  id: string
  /** A tool name, or `:` followed by a host function name (tool names cannot contain `:`). */
  wire: string
  args: string
}

/** Splits a drained outbox (`<id>\n<wire>\n<args JSON>` entries joined by U+0001; JSON never contains it raw). */
export function parseCalls(batch: string): QueuedCall[] {
  if (!batch) return []
  return batch.split('\u0001').map((entry) => {
    const first = entry.indexOf('\n')
    const second = entry.indexOf('\n', first + 1)
    return { id: entry.slice(0, first), wire: entry.slice(first + 1, second), args: entry.slice(second + 1) }
  })
}

/**
 * How one call ended, as the program sees it: a value's JSON text, or a failure: its message, its `code`
 * and, for a `CordageError`, its `info` (`{ name, code }`), which the program's `ToolCallError` carries.
 */
export type CallOutcome = { ok: true; json: string } | { ok: false; message: string; code: string; info?: { name: string; code: string } }

/** A failed tool result (or a host function's failure) as a call outcome; plain errors get `TOOL_FAILED`. */
export function failedOutcome(error: { message: string; info?: { name: string; code: string } }): CallOutcome {
  return error.info
    ? { ok: false, message: error.message, code: error.info.code, info: error.info }
    : { ok: false, message: error.message, code: 'TOOL_FAILED' }
}

/** What a thrown error becomes: its message, and its code and info when it is a `CordageError`. */
export function thrownOutcome(error: unknown): CallOutcome {
  const result = failure(error)
  return result.isError ? failedOutcome(result.error) : { ok: false, message: String(error), code: 'TOOL_FAILED' }
}

/** The text `settle` in the prelude parses: `<id>\n1<value JSON>` or `<id>\n0<failure JSON>`. */
export function encodeCompletion(id: string, outcome: CallOutcome): string {
  if (outcome.ok) return `${id}\n1${outcome.json}`
  const failure = outcome.info ? { message: outcome.message, code: outcome.code, info: outcome.info } : { message: outcome.message, code: outcome.code }
  return `${id}\n0${JSON.stringify(failure)}`
}

/** A queued call's arguments, parsed; a call whose text is not JSON is answered with `failed` instead. */
export function parseArgs(call: QueuedCall): { args: JsonValue } | { failed: CallOutcome } {
  try {
    return { args: JSON.parse(call.args) as JsonValue }
  } catch {
    return { failed: { ok: false, message: 'the arguments are not JSON', code: 'INVALID_ARGS' } }
  }
}

/**
 * A call's outcome as the VM may receive it: a value the VM cannot hold (its text, then the parsed
 * copy) would exhaust the heap inside the interpreter's own string allocation and abort it, so it is
 * refused as a call failure instead.
 */
export function boundOutcome(outcome: CallOutcome, memoryBytes: number): CallOutcome {
  if (!outcome.ok || outcome.json.length * 2 <= memoryBytes) return outcome
  return {
    ok: false,
    code: 'VALUE_TOO_LARGE',
    message: `the value is ${outcome.json.length} characters of JSON, too large for the sandbox (memoryBytes ${memoryBytes}); ask for less, e.g. a narrower query or one page`,
  }
}
