import type { AgentService } from './service.js'

declare module 'cordis' {
  interface Context {
    /** Provided by the `agent` plugin (`AgentService`). */
    agent: AgentService
  }
}

export type { ModelTool, ToolCall, Message, ThinkingBlock, Usage, ModelEvent, CompletionRequest, ModelService, ModelInfo, ModelPrice } from './model.js'
export type { AgentEvent, AgentOptions, AgentResult, RunOptions, StopReason, ToolView } from './agent-types.js'
export { Agent } from './agent.js'
export type {
  SessionHeader,
  SessionParent,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SessionEventBody,
  ToolResultRecord,
  CodeDispatchRecord,
  CompactRecord,
} from './session-types.js'
export { SESSION_VERSION } from './session-types.js'
export type { SessionLocation, CreateSessionOptions, SessionDurability } from './session-log.js'
export { SessionLog, sessionDir, resolveSessionFile } from './session-log.js'
export type { LoadedSession } from './session-load.js'
export { loadSession } from './session-load.js'
export { childSessionFiles } from './session-tree.js'
export { deriveMessages, formatContext, messageOf } from './messages.js'
export { applyCompaction } from './compaction.js'
export { COMPACTION_PROMPT, CLEARED_NOTE } from './compaction-prompt.js'
export { ContextMeter, estimateTokens, estimateToolTokens } from './context-meter.js'
export type { CompactionOptions } from './compactor.js'
export { addUsage, costOf, emptyUsage, formatCost, formatUsage, type UsageTotals } from './usage.js'
export { SessionError, NoModelError, ModelError } from './errors.js'
export type { CreateAgentOptions } from './service.js'
export { AgentService } from './service.js'
export { AgentService as default } from './service.js'
export { JsonlSessionStore, type JsonlStoreOptions } from './jsonl-store.js'
export { JsonlSessions, type JsonlSessionsConfig } from './sessions-plugin.js'
