import type { AgentService } from './service.js'

declare module 'cordis' {
  interface Context {
    /** Provided by the `agent` plugin (`AgentService`). */
    agent: AgentService
  }
}

export type { ModelTool, ToolCall, Message, ThinkingBlock, Usage, ModelEvent, CompletionRequest, ModelService, ModelInfo, ModelPrice } from './model.js'
export type { AgentEvent, AgentOptions, AgentResult, RunOptions, StopReason, ToolView } from './agent-types.js'
export { Agent, formatContext } from './agent.js'
export type {
  SessionHeader,
  SessionParent,
  SessionEvent,
  SessionEventMap,
  SessionEventType,
  SessionEventBody,
  ToolResultRecord,
  CodeDispatchRecord,
} from './session-types.js'
export { SESSION_VERSION } from './session-types.js'
export type { SessionLocation, CreateSessionOptions } from './session-log.js'
export { SessionLog, sessionDir, resolveSessionFile } from './session-log.js'
export type { LoadedSession } from './session-load.js'
export { loadSession } from './session-load.js'
export { childSessionFiles } from './session-tree.js'
export { deriveMessages, messageOf } from './messages.js'
export { addUsage, costOf, emptyUsage, formatCost, formatUsage, type UsageTotals } from './usage.js'
export { SessionError, NoModelError, ModelError } from './errors.js'
export type { CreateAgentOptions } from './service.js'
export { AgentService } from './service.js'
export { AgentService as default } from './service.js'
