import { CordageError, type JsonValue } from '@cordage/core'

/** The header of a stored session (the first line of a JSONL session file; a row of `sessions` in PostgreSQL). */
export interface StoredSessionHeader {
  type: 'session'
  version: number
  id: string
  createdAt: string
  cwd: string
  /** The model service id at creation, when known. */
  model?: string
  /** For a child run (a subagent, a workflow's agent): the call that started it, so replay nests it there. */
  parent?: StoredSessionParent
  /** How many runs deep this one is: absent or 0 for a top-level run, 1 for its children, … */
  depth?: number
}

/** Where a child session was started: the parent session (when it had one) and the tool call. */
export interface StoredSessionParent {
  session?: string
  callId: string
  /** The tool that started it (`subagent`, `workflow`, `ralph`). */
  tool: string
}

/** One event of a session: `seq` grows by one from 1 within its session. */
export interface StoredEvent {
  type: string
  seq: number
  time: string
  data: JsonValue | object
}

/** A whole session as read back: header, events in `seq` order, and what reading tolerated (a torn JSONL line). */
export interface StoredSession {
  header: StoredSessionHeader
  events: StoredEvent[]
  warnings: string[]
}

/**
 * `ended` once the session's last event is `session/end`; `waiting` while it is `session/waiting` (a queued
 * run stopped for its user's answer, holding no worker); `running` otherwise (a crashed run stays `running`).
 */
export type SessionStatus = 'running' | 'waiting' | 'ended'

/** The status a session's last event gives it (shared by every store). */
export function statusOf(lastType: string | undefined): SessionStatus {
  return lastType === 'session/end' ? 'ended' : lastType === 'session/waiting' ? 'waiting' : 'running'
}

/** One entry of `list`: the header and what a session list shows without reading every event. */
export interface SessionSummary {
  header: StoredSessionHeader
  status: SessionStatus
  /** The highest `seq` stored (0 for a session with no events yet). */
  lastSeq: number
  /** When the last event was written (the header's `createdAt` when none). */
  updatedAt: string
}

/** Filters of `list`; all optional, combined with AND. */
export interface SessionListFilter {
  status?: SessionStatus
  /** Sessions created at or after this ISO time. */
  since?: string
  /** Sessions created before this ISO time. */
  until?: string
  /** Child sessions of this session id (`header.parent.session`); `null` for top-level sessions only. */
  parent?: string | null
  /** At most this many, newest first. */
  limit?: number
}

/** Options of `follow`. */
export interface FollowOptions {
  /** Yield events with `seq` greater than this (an SSE `Last-Event-ID`); default 0, every event. */
  after?: number
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal
}

/**
 * The `sessions` service: where agent sessions are kept. The JSONL files of `@cordage/agent` are the
 * embedded default; `@cordage/plugin-store-postgres` keeps them in PostgreSQL. Errors are `CordageError`s
 * with codes `SESSION_NOT_FOUND`, `SESSION_EXISTS`, `SESSION_SEQ` (an event out of order) and
 * `INVALID_SESSION_ID`; every store passes `testSessionStore` from `@cordage/testing`.
 */
export interface SessionStore {
  /** What keeps the sessions (`jsonl`, `postgres`). */
  readonly kind: string
  /** Records a new session; `SESSION_EXISTS` when the id is taken. */
  create(header: StoredSessionHeader): Promise<void>
  /**
   * Appends a batch (one agent turn) atomically and durably: when the promise resolves every event is
   * stored, and after a crash either all of them or none are. Each `seq` must follow the last stored one
   * by exactly one (`SESSION_SEQ` otherwise, nothing stored).
   */
  append(id: string, events: readonly StoredEvent[]): Promise<void>
  /** The session's header and every event in `seq` order; `SESSION_NOT_FOUND` when unknown. */
  read(id: string): Promise<StoredSession>
  /** Sessions matching `filter`, newest (`createdAt`) first. */
  list(filter?: SessionListFilter): Promise<SessionSummary[]>
  /**
   * Every event after `options.after`, then each new one as it is appended (by this process or another);
   * the iteration ends after `session/end` or when the signal aborts. `SESSION_NOT_FOUND` when unknown.
   */
  follow(id: string, options?: FollowOptions): AsyncIterable<StoredEvent>
}

/** A store refused or failed an operation; route on `code`. */
export class SessionStoreError extends CordageError {
  declare readonly code: 'SESSION_NOT_FOUND' | 'SESSION_EXISTS' | 'SESSION_SEQ' | 'SESSION_CORRUPT' | 'INVALID_SESSION_ID' | 'STORE_UNAVAILABLE'
}

const SESSION_ID = /^[\w.-]{1,128}$/

/** Throws `INVALID_SESSION_ID` unless `id` is 1–128 letters, digits, `.`, `_` or `-` (a safe file name). */
export function assertSessionId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !SESSION_ID.test(id) || id === '.' || id === '..')
    throw new SessionStoreError('INVALID_SESSION_ID', `invalid session id ${JSON.stringify(id)}: use 1-128 letters, digits, '.', '_' and '-'`)
}

/** Throws `SESSION_SEQ` unless `events` continue `lastSeq` one by one. */
export function assertNextSeqs(id: string, lastSeq: number, events: readonly StoredEvent[]): void {
  let expected = lastSeq
  for (const event of events) {
    expected++
    if (event.seq !== expected)
      throw new SessionStoreError('SESSION_SEQ', `session ${id}: event ${event.type} has seq ${event.seq}, expected ${expected}; nothing was appended`)
  }
}

/** What `list` keeps of a summary under `filter` (shared by every store so they filter alike). */
export function matchesFilter(summary: SessionSummary, filter: SessionListFilter): boolean {
  const { header } = summary
  if (filter.status !== undefined && summary.status !== filter.status) return false
  if (filter.since !== undefined && header.createdAt < filter.since) return false
  if (filter.until !== undefined && header.createdAt >= filter.until) return false
  if (filter.parent === null && header.parent?.session !== undefined) return false
  if (typeof filter.parent === 'string' && header.parent?.session !== filter.parent) return false
  return true
}
