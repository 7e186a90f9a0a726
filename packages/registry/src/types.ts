import type {
  ContentBlock,
  HookContext,
  JsonSchemaNode,
  JsonValue,
  ToolAnnotations,
  ToolDefinition,
  ToolExec,
  ToolExecutionResult,
  ToolExecutionToken,
} from '@cordage/core'

/** What `ctx.tools.list()` describes for each tool (sorted by name). */
export interface ToolSchema {
  name: string
  description: string
  parameters: JsonSchemaNode
  outputSchema: JsonSchemaNode
  /** The tool's hints (`readOnlyHint`, …), frozen, when it declares any. */
  annotations?: Readonly<ToolAnnotations>
}

/** The input of `ctx.tools.execute`. */
export interface ExecuteInput {
  name: string
  arguments: unknown
  callId?: string
  signal?: AbortSignal
  /** The dispatch token of the enclosing call, for nested (Code Mode) dispatch. */
  parent?: ToolExecutionToken
  agent?: string
}

/** A `tools/pre-execute` answer. The innermost answer is `{ kind: 'allow' }`. */
export type PreDecision = { kind: 'allow' } | { kind: 'deny'; reason: string } | { kind: 'ask'; reason?: string }

/**
 * A `tools/post-execute` answer. The innermost answer is `{ kind: 'accept' }`.
 * `content` replaces presentation only; `value` replaces the value (revalidated, re-rendered); both → failure.
 */
export type PostDecision =
  | { kind: 'accept'; content?: ContentBlock[]; value?: JsonValue; additionalContexts?: HookContext[] }
  | { kind: 'block'; feedback: string | ContentBlock[]; additionalContexts?: HookContext[] }

/** A `tools/present` listener: bounds the content of a settled, accepted direct result (the value is never touched). */
export type Presenter = (exec: ToolExec, result: ToolExecutionResult, next: () => Promise<ContentBlock[]>) => ContentBlock[] | Promise<ContentBlock[]>

/** A guard: a returned reason denies the call; guards run after pre-execute and cannot be overridden. */
export type ToolGuard = (exec: ToolExec) => string | undefined

/** The optional `approval` service that answers `ask` decisions. */
export interface ApprovalService {
  request(exec: ToolExec, reason?: string): Promise<'allow' | 'deny'>
}

declare module 'cordis' {
  interface Context {
    tools: import('./registry.js').ToolRegistry
    approval?: ApprovalService
  }

  interface Events {
    /** Waterfall `(exec, next) => PreDecision`, before guards; innermost answer `{ kind: 'allow' }`. */
    'tools/pre-execute'(exec: ToolExec, next: () => Promise<PreDecision>): PreDecision | Promise<PreDecision>
    /** Waterfall around the body `(exec, next) => Promise<ToolExecutionResult>`, for timeouts, retries, caching, metrics. */
    'tools/execute'(exec: ToolExec, next: () => Promise<ToolExecutionResult>): Promise<ToolExecutionResult>
    /** Waterfall `(exec, result, next) => PostDecision` for successes and failures; innermost `{ kind: 'accept' }`. */
    'tools/post-execute'(exec: ToolExec, result: ToolExecutionResult, next: () => Promise<PostDecision>): PostDecision | Promise<PostDecision>
    /**
     * Waterfall `(exec, result, next) => ContentBlock[]`, the final presentation phase: runs after
     * `tools/post-execute` has settled, for direct calls whose result it accepted (successes and tool
     * failures, not blocks or denials); innermost answer `result.content`.
     * A listener may only replace the content the model sees (to bound it), never the value; a throwing
     * listener or malformed content keeps the content as it was (logged).
     */
    'tools/present': Presenter
    /** Emit `(exec, result)` with the final frozen result; observe-only, listener errors are logged and ignored. */
    'tools/result'(exec: ToolExec, result: ToolExecutionResult): void
    /** Emit `()` after any registration or unregistration. */
    'tools/changed'(): void
  }
}

export type { ToolDefinition }
