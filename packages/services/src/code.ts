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

/**
 * The `codeMode` service (`ctx.codeMode`): runs a program in the same isolated sandbox as `run_code`,
 * with the same limits and tool access (every nested call through the full pipeline). `run` rejects
 * with a `CordageError` of code `CODE_RUN_FAILED` (its message names the kind: memory, cpu, timeout,
 * output, calls, aborted, runtime) when the program fails or is stopped.
 */
export interface CodeRunner {
  run(options: CodeRunOptions): Promise<CodeRunResult>
}
