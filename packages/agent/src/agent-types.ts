import type { ContentBlock } from '@cordage/core'
import type { ToolSchema } from '@cordage/registry'
import type { Message, ModelService, Usage } from './model.js'
import type { CompactionOptions } from './compactor.js'
import type { SessionLog } from './session-log.js'

/** Progress of a run, for UIs. Listener errors are logged and ignored. */
export type AgentEvent =
  | { type: 'turn/start'; turn: number }
  /** A streamed piece of the model's text. */
  | { type: 'text/delta'; delta: string }
  /** A streamed piece of the model's reasoning (shown dimmed; stored with the turn, never a value). */
  | { type: 'thinking/delta'; delta: string }
  /** The model's complete turn, as committed to the conversation. */
  | { type: 'assistant/message'; message: Extract<Message, { role: 'assistant' }>; finishReason: string; usage?: Usage }
  /** A tool call is dispatched (`arguments` is the model's raw JSON text). */
  | { type: 'tool/start'; callId: string; name: string; arguments: string }
  /** A tool call finished; `code` is the failure's code (`INVALID_ARGS`, `DENIED`, …). */
  | { type: 'tool/end'; callId: string; name: string; isError: boolean; code?: string; durationMs: number; content: ContentBlock[] }
  /** A context message (hook `additionalContexts`, job notice) was appended as a user-role message. */
  | { type: 'context'; source: string; content: string }
  | { type: 'turn/end'; turn: number }
  /** A compaction started: `tokens` is the estimated prompt size that triggered it. */
  | { type: 'compact/start'; reason: 'auto' | 'overflow' | 'manual'; tokens: number }
  /** The conversation was compacted: `summarized` messages replaced by a summary, `cleared` tool results emptied. */
  | { type: 'compact'; reason: 'auto' | 'overflow' | 'manual'; tokensBefore: number; tokensAfter: number; summarized: number; cleared: number }

/** Why a run stopped. */
export type StopReason = 'completed' | 'max-turns' | 'aborted' | 'length'

/** The outcome of `Agent.run`. */
export interface AgentResult {
  /** The text of the last assistant message ('' if none). */
  text: string
  stopReason: StopReason
  /** Model requests made by this run. */
  turns: number
  /** Summed over this run's turns (zeros when the provider reports none); every field present. */
  usage: Required<Usage>
  /** US dollars at the model's price; undefined when a turn's price is unknown (never 0 for unknown). */
  cost?: number
}

/** Options of an `Agent`; everything is optional. */
export interface AgentOptions {
  /** Default: the context's `model` service. */
  model?: ModelService
  /** The system prompt, committed once at the start of a new conversation. */
  system?: string
  /** Model requests per `run` before it stops with `max-turns`; default 50. */
  maxTurns?: number
  /** Persist the conversation here; when resuming, the conversation is derived from its events. */
  session?: SessionLog
  /** Initial conversation when there is no session (ignored with one). */
  messages?: Message[]
  /** Passed to every tool call as `exec.agent`; default the session id (none without a session). */
  agent?: string
  /** Which tools the model is offered; default every listed tool. */
  tools?: ToolView
  /** Progress listener. */
  onEvent?: (event: AgentEvent) => void
  /** The agent's lifetime: aborting it stops every run as if the run's own signal aborted. */
  signal?: AbortSignal
  /** When the conversation is compacted (default: at 80 % of the model's known window). */
  compaction?: CompactionOptions
}

/**
 * The tools an agent is offered. A call the model makes to a name outside the view fails with
 * `UNKNOWN_TOOL` without being dispatched. (The view is what the model sees; a boundary that must also
 * hold for nested calls, e.g. from `run_code`, is a registry guard keyed on `exec.agent`.)
 */
export interface ToolView {
  /** Names of listed tools to offer; default all of them. */
  allow?: readonly string[]
  /** Schemas offered to this agent only, e.g. a hidden tool with a per-run parameter schema. */
  extra?: readonly ToolSchema[]
}

/** Options of one `Agent.run`. */
export interface RunOptions {
  signal?: AbortSignal
  /** Overrides the agent's `maxTurns` for this run. */
  maxTurns?: number
  /** Checked after each turn's tool calls have committed: `true` ends the run as `completed` (e.g. a result was recorded). */
  until?: () => boolean
  /**
   * Before the first request, runs the calls of the conversation's last model turn that have no result
   * (a run resumed after its user answered: those calls had not started). Ignored with an `input`.
   */
  finishCalls?: boolean
}
