import type { Context } from 'cordis'
import type { AgentCompactEvent, AgentRequestEvent, AgentRunEvent } from './agents.js'
import type { ChildRunEvent } from './child.js'
import type { CodeRunner } from './code.js'
import type { AgentNotice } from './notice.js'
import type { SubagentService } from './subagents.js'
import type { JobSnapshot, JobsService } from './jobs.js'
import type { AgentUsageEvent, ModelService } from './model.js'
import type { OpenedAccess, OpenedFile } from './paths.js'
import type { SpillService } from './spill.js'
import type { InteractionService, PlanModeService } from './interaction.js'
import type { SystemSection } from './system.js'
import type { TodoList } from './todo.js'
import type { WebService } from './web.js'
import type { SessionStore } from './sessions.js'
import type { ToolExec } from '@cordage/core'

/**
 * Service names Cordage's packages provide or read (`ctx.get`): code that lets others provide services
 * (mounted plugins) keeps them, so nothing stands in for the host's registry, model, approvals or store.
 */
export const HOST_SERVICES: ReadonlySet<string> = new Set([
  'tools',
  'approval',
  'agent',
  'jobs',
  'interaction',
  'planMode',
  'codeMode',
  'subagents',
  'web',
  'model',
  'spill',
  'sessions',
])

declare module 'cordis' {
  interface Context {
    jobs: JobsService
    interaction?: InteractionService
    planMode?: PlanModeService
    codeMode: CodeRunner
    subagents: SubagentService
    web: WebService
    /** The model the agent loop talks to (`@cordage/plugin-model-openai`, `@cordage/plugin-model-anthropic`, the scripted model). */
    model: ModelService
    /** Optional: where bounded output goes in full (`@cordage/plugin-spill`); read it with `ctx.get('spill')`. */
    spill: SpillService
    /** Where agent sessions are kept: JSONL files by default, PostgreSQL with `@cordage/plugin-store-postgres`. */
    sessions: SessionStore
  }

  interface Events {
    /** Emit `(job)` once a job ends (exited, killed or failed), with its final public snapshot; observe-only. */
    'jobs/completed'(job: JobSnapshot): void
    /** Emit `(notice)`: every agent run in progress adds it as context before its next model request; observe-only. */
    'agent/notice'(notice: AgentNotice): void
    /** Emit `(sections)` when an agent starts a new conversation: listeners push the sections they add to its system prompt. */
    'agent/system'(sections: SystemSection[]): void
    /** Emit `(list)` after a `todo_write` changed a session's todo list; observe-only (UIs show it). */
    'todo/changed'(list: TodoList): void
    /** Emit `(active)` when plan mode is entered or left; observe-only. */
    'plan/mode'(active: boolean): void
    /** Emit `(event)` when a child run starts or ends; observe-only (progress displays). */
    'agent/child'(event: ChildRunEvent): void
    /**
     * Bail `(exec, file, access)` after a tool opened `file` for the call `exec`, before it reads or changes
     * it: a listener returns why the call may not use it (the policy plugin's path rules), or undefined.
     */
    'paths/opened'(exec: ToolExec, file: OpenedFile, access: OpenedAccess): string | undefined
    /** Emit `(event)` when an agent loop's run starts and when it ends (emitted only while someone listens); observe-only. */
    'agent/run'(event: AgentRunEvent): void
    /** Emit `(event)` after each model request of an agent run, with its usage (emitted only while someone listens); observe-only. */
    'agent/usage'(event: AgentUsageEvent): void
    /** Emit `(event)` when a model request of an agent run starts and when it ends (emitted only while someone listens); observe-only. */
    'agent/request'(event: AgentRequestEvent): void
    /** Emit `(event)` after an agent run's conversation was compacted (emitted only while someone listens); observe-only. */
    'agent/compact'(event: AgentCompactEvent): void
  }
}

export type { AgentNotice } from './notice.js'
export type { AgentCompactEvent, AgentLineage, AgentLineageSource, AgentRequestEvent, AgentRunEvent } from './agents.js'
export { lineageOf, mayUse } from './agents.js'
export type { McpBridgedDefinition, McpOrigin } from './mcp.js'
export { mcpOriginOf } from './mcp.js'
export type { Answer, InteractionService, PlanModeService, PlanReview, Question, QuestionOption } from './interaction.js'
export type { SystemSection } from './system.js'
export { composeSystem } from './system.js'
export type { TodoCounts, TodoItem, TodoList, TodoStatus } from './todo.js'
export type { ChildRunEvent } from './child.js'
export type { SubagentService, ChildRunOptions, ChildRunCaller, ChildRunResult } from './subagents.js'
export type { CodeRunner, CodeRunOptions, CodeRunResult, CodeHostFunction, CodeSession, CodeSessionOptions } from './code.js'
export { JobSnapshotSchema } from './jobs.js'
export type { JobsService, JobSnapshot, JobState, JobExit, JobStartOptions, JobHandle, JobRead } from './jobs.js'

/** A Cordis context that has the `jobs` service (what `ctx.inject(['jobs'], (ctx) => …)` hands a callback). */
export type JobsContext = Context & { jobs: JobsService }
export type {
  ModelTool,
  ToolCall,
  Message,
  ThinkingBlock,
  Usage,
  ModelEvent,
  CompletionRequest,
  ModelService,
  ModelInfo,
  ModelPrice,
  AgentUsageEvent,
} from './model.js'
export { ModelRequestError, type ModelRequestErrorCode } from './model-error.js'
export { configuredPrice, modelInfo, type KnownModel } from './model-info.js'
export type { SpillInput, SpillSaved, SpillService, SpillWriter } from './spill.js'
export type { WebService, WebSearchProvider, WebSearchHit } from './web.js'
export type { OpenedAccess, OpenedFile } from './paths.js'
export type {
  SessionStore,
  StoredSessionHeader,
  StoredSessionParent,
  StoredEvent,
  StoredSession,
  SessionStatus,
  SessionSummary,
  SessionListFilter,
  FollowOptions,
} from './sessions.js'
export { SessionStoreError, assertSessionId, assertNextSeqs, matchesFilter, statusOf } from './sessions.js'
export { followEvents, type FollowSource } from './session-follow.js'
