import type { JsonValue, ToolExecutionToken } from '@cordage/core'

/** Why a program run failed: a limit it hit, a parse error, an interpreter abort, or an uncaught exception. */
export type CodeRunFailureKind = 'memory' | 'cpu' | 'timeout' | 'output' | 'calls' | 'syntax' | 'aborted' | 'runtime'

/**
 * An extra async global a host lends one program. Its argument is the program's JSON argument
 * (snapshotted when called); `signal` aborts when the run ends first. The value must be JSON; a throw
 * rejects the program's call with a `ToolCallError` carrying the message.
 */
export type CodeHostFunction = (args: JsonValue, call: { signal: AbortSignal }) => Promise<JsonValue> | JsonValue

/** One program to run in the Code Mode sandbox. */
export interface CodeRunOptions {
  /** The body of an async function (plain JavaScript), as `run_code` takes it. */
  code: string
  /** Aborting ends the run within ~100 ms whatever the program is doing; `run` then rejects with `ABORTED`. */
  signal?: AbortSignal
  /** Token of the call this run belongs to: nested tool calls are dispatched with it as `parent`. */
  parent?: ToolExecutionToken
  /** Agent id passed to nested tool calls. */
  agent?: string
  /**
   * Extra async globals, keyed by dotted path: `{ 'agents.run': fn }` lets the program
   * `await agents.run(args)`. Keys are identifiers joined by dots and must not shadow `tools`,
   * `console` or `ToolCallError`.
   */
  host?: Record<string, CodeHostFunction>
}

/** What a completed program produced (the `run_code` value). `result` is absent when it returned undefined. */
export interface CodeRunOutput {
  logs: string[]
  result?: JsonValue
}

/**
 * The `codeMode` service (`ctx.codeMode`): runs a program in the same isolated, pooled sandbox as
 * `run_code` (same limits, same visible tools, policy applying to every nested call). Rejects with a
 * `CordageError`: `CODE_RUN_FAILED` (with `kind: CodeRunFailureKind` and `logs`), `ABORTED`, or
 * `INVALID_ARGS` for a bad `host` key. Implemented by `@cordage/plugin-code-mode`.
 */
export interface CodeModeService {
  run(options: CodeRunOptions): Promise<CodeRunOutput>
}
