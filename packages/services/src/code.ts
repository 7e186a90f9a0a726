import type { JsonValue, ToolExecutionToken } from '@cordage/core'

/** A host function a program can await: one JSON argument in, one JSON value out (a rejection throws in the program). */
export type CodeHostFunction = (args: JsonValue, signal: AbortSignal) => Promise<JsonValue>

/** One program run through the `codeMode` service. */
export interface CodeRunOptions {
  /** The program: an async function body that may `await tools.<name>(args)` and ends with `return <json>`. */
  code: string
  /** Cancels the run: the program is stopped and in-flight tool calls are aborted. */
  signal?: AbortSignal
  /** The dispatch token of the call running the program; nested tool calls carry it as `parent`. */
  parent?: ToolExecutionToken
  /** Passed to nested tool calls as `exec.agent`. */
  agent?: string
  /** Extra async globals by dotted name (`'agents.run'` → `await agents.run(args)`), e.g. a workflow's subagents. */
  host?: Record<string, CodeHostFunction>
}

/** What a program produced: its console output and its JSON return value (absent when it returned nothing). */
export interface CodeRunResult {
  logs: string[]
  result?: JsonValue
}

/** A persistent sandbox (`codeMode.open`): its host functions, its CPU budget per step, and where its console goes. */
export interface CodeSessionOptions {
  /** Async globals by dotted name, as in `run`; the session's only way out (no `tools` are bound). */
  host?: Record<string, CodeHostFunction>
  /**
   * Trusted code of the caller, evaluated first (an async function body that settles at once and calls
   * no host function), e.g. a façade later evaluations use. An idle worker evaluates the last setup it
   * saw ahead of time, so opening the next session with the same setup skips parsing it; a setup that
   * fails ends the session (`runtime`).
   */
  setup?: string
  /** CPU time one step may use (a message's evaluation plus the promise jobs it starts); past it the session ends (`cpu`). Default: the runner's `cpuTimeMs`. */
  stepCpuMs?: number
  /** Receives each console line (bounded per step; a note counts the lines dropped). */
  onLog?(line: string): void
  /** Called once if the session ends on its own (a breached limit, an interpreter failure, the plugin unloaded), never after `close()`. */
  onEnd?(error: Error): void
}

/**
 * One persistent QuickJS context in the Code Mode worker pool, holding one worker until `close()`.
 * Globals set by one evaluation stay for the next; evaluations overlap while they await host functions.
 * An evaluation rejects with a `CordageError` of code `CODE_RUN_FAILED` whose `kind` says why:
 * `runtime` (the code threw or returned a non-JSON value: the session lives on), `timeout` (its
 * `timeoutMs` passed: the session lives on and the evaluation's late result is dropped), anything else
 * (`cpu`, `memory`, `aborted`, `calls`): the session ended.
 */
export interface CodeSession {
  /** Evaluates `code` as the body of an async function in the session's context; resolves with its JSON return value (undefined for none). */
  evaluate(code: string, options?: { timeoutMs?: number; file?: string }): Promise<JsonValue | undefined>
  /** Ends the session at once (a busy worker is terminated); pending evaluations reject with kind `aborted`. */
  close(): Promise<void>
  /** Whether the session has ended (closed, or on its own). */
  readonly ended: boolean
}

/**
 * The `codeMode` service (`ctx.codeMode`): runs a program in the same isolated sandbox as `run_code`,
 * with the same limits and tool access (every nested call through the full pipeline). `run` rejects
 * with a `CordageError` of code `CODE_RUN_FAILED` (its message names the kind: memory, cpu, timeout,
 * output, calls, aborted, runtime) when the program fails or is stopped. `open` starts a persistent
 * session in the same pool and memory limit (see `CodeSession`).
 */
export interface CodeRunner {
  /** Runs one program to its end in a fresh context. */
  run(options: CodeRunOptions): Promise<CodeRunResult>
  /** Opens a persistent session on a pooled worker (held until its `close()`). */
  open(options?: CodeSessionOptions): Promise<CodeSession>
}
