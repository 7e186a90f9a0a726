import type { ContentBlock, JsonValue } from '@cordage/core'
import type { StoredSessionHeader, StoredSessionParent } from '@cordage/services'
import type { ThinkingBlock, ToolCall, Usage } from './model.js'

/** The session file format version written in every header. */
export const SESSION_VERSION = 1

/** The first line of every session file (the store seam's header: one definition). */
export type SessionHeader = StoredSessionHeader

/** Where a child session was started: the parent session (when it had one) and the tool call. */
export type SessionParent = StoredSessionParent

/** What a `tool/result` event stores: the rendered content and failure description, never the canonical value. */
export interface ToolResultRecord {
  callId: string
  name: string
  content: ContentBlock[]
  isError: boolean
  error?: { message: string; code?: string }
  meta?: JsonValue
}

/** A nested (Code Mode) call made while the direct call `parentCallId` ran; `index` is its order within that parent. */
export interface CodeDispatchRecord {
  parentCallId: string
  index: number
  name: string
  arguments: JsonValue
  content: ContentBlock[]
  isError: boolean
}

/**
 * A compaction: the conversation derived so far is replaced by the system prompt, a summary (none when
 * only results were cleared) and the messages from `keepFrom` on, with the `cleared` tool results
 * replaced by a note (see `applyCompaction`).
 */
export interface CompactRecord {
  summary: string
  /** Index, in the conversation before the compaction, of the first message kept. */
  keepFrom: number
  cleared?: string[]
  /** Why: `auto` (the window's threshold), `overflow` (the provider refused the size), `manual`. */
  reason: 'auto' | 'overflow' | 'manual'
  /** Estimated prompt tokens before and after. */
  tokensBefore: number
  tokensAfter: number
  /** The summary request's usage and cost, when one was made. */
  usage?: Usage
  cost?: number
}

/** The data of each event type. */
export interface SessionEventMap {
  /** The system prompt, as sent to the model. */
  'system/message': { content: string }
  /** A user message; `source` is set when the agent injected it as context (hook or job notice). */
  'user/message': { content: string; source?: string }
  /**
   * A model turn: its text and the tool calls it proposed (arguments as the raw JSON text), the reasoning
   * it showed (kept as content so it can be sent back), the model that produced it, its usage and cost
   * (US dollars; absent when the price is unknown).
   */
  'assistant/message': {
    content: string
    toolCalls?: ToolCall[]
    thinking?: ThinkingBlock[]
    model?: string
    finishReason?: string
    usage?: Usage
    cost?: number
  }
  'tool/result': ToolResultRecord
  'tool/code-dispatch': CodeDispatchRecord
  'session/compact': CompactRecord
  /** The end of one `Agent.run`: why it stopped, its model requests, and their usage and cost totals. */
  'run/end': { stopReason: string; turns: number; usage: Usage; cost?: number }
  /** Written by `SessionLog.close`. */
  'session/end': { reason: string; message?: string }
  /**
   * A queued run stopped to wait for its user: the request (an approval of call `callId`, or the questions
   * or plan that call asks) and the call it concerns. Every call of the turn that had started has its
   * result stored before this event; the calls without one had not started.
   */
  'session/waiting': { request: { id: string; kind: string; [key: string]: unknown }; callId: string }
  /** The user's answer to the request `requestId` of the last `session/waiting` (stored by whoever took it). */
  'session/answer': { requestId: string; answer: unknown }
  /** A worker resumed the run with that answer: calls without a result after this had started (a crash leaves them interrupted). */
  'session/resumed': { requestId: string }
}

export type SessionEventType = keyof SessionEventMap

/** One line after the header: `{ type, seq, time, data }`. */
export type SessionEvent<T extends SessionEventType = SessionEventType> = {
  [K in T]: { type: K; seq: number; time: string; data: SessionEventMap[K] }
}[T]

/** An event's `type` and `data` only (what `deriveMessages` reads). */
export type SessionEventBody = { [K in SessionEventType]: { type: K; data: SessionEventMap[K] } }[SessionEventType]
