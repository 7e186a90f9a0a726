import { CordageError } from '@cordage/core'
import { SessionLog, type SessionEvent, type SessionEventMap } from '@cordage/agent'
import type { PendingRequest } from '@cordage/server'
import type { SessionStore, StoredEvent, StoredSession } from '@cordage/services'
import { waitState } from './waiting.js'

/** A queued run's session, ready for its agent. */
export interface OpenedRun {
  log: SessionLog
  /** The task still has to be added (no user message is stored yet). */
  needsPrompt: boolean
  /** The stored run had already finished its work (a last answer without tool calls): only the end is missing. */
  answered: boolean
  /** The run resumes after its user answered: the calls of its last turn without a result run first (none had started). */
  resume?: { request: PendingRequest; callId: string; answer: unknown }
  /** Tools its user answered `always` for. */
  always: Set<string>
}

const INTERRUPTED_TEXT =
  'the worker running this call stopped before its result was recorded (it was killed or lost its lock); the call may have run in part or in full, so check its effects before retrying it'

/**
 * Opens run `id` in `store`: a new session when none is stored (a first start, or a worker that died before
 * storing anything), else the stored one continued. Completed tool calls keep their stored results and are
 * never executed again; a call of the last turn with no stored result was in flight when the previous worker
 * stopped, and gets an `INTERRUPTED` error result (stored before the agent starts), never a second run.
 * A run its user answered resumes with the answer (its calls without a result had not started: they run
 * now); after such a resume, a call without a result was in flight as after any crash. Resolves to
 * undefined for a session that already ended, and to `'waiting'` for one still waiting for its answer.
 */
export async function openRun(store: SessionStore, id: string, cwd: string, model: string | undefined): Promise<OpenedRun | 'waiting' | undefined> {
  let stored: StoredSession
  try {
    stored = await store.read(id)
  } catch (error) {
    if (!(CordageError.is(error) && error.code === 'SESSION_NOT_FOUND')) throw error
    const log = SessionLog.createIn(store, { id, cwd, model })
    await log.ready
    return { log, needsPrompt: true, answered: false, always: new Set() }
  }
  const { events } = stored
  if (events.some((event) => event.type === 'session/end')) return undefined
  const wait = waitState(events)
  if (wait.kind === 'waiting') return 'waiting'
  const resume = wait.kind === 'answered' ? { request: wait.request, callId: wait.callId, answer: wait.answer } : undefined
  const repairs = resume ? [] : interruptedResults(events as SessionEvent[])
  if (repairs.length) await store.append(id, repairs)
  // The session as stored now: what was read, and the repairs just appended (no second read).
  const log = await SessionLog.openIn(store, id, { repair: !resume, stored: { ...stored, events: [...events, ...repairs] } })
  const needsPrompt = !log.events.some((event) => event.type === 'user/message' && !(event.data as SessionEventMap['user/message']).source)
  const last = log.events.findLast((event) => event.type !== 'run/end')
  const answered = last?.type === 'assistant/message' && !(last.data as SessionEventMap['assistant/message']).toolCalls?.length
  return { log, needsPrompt, answered, ...(resume && { resume }), always: alwaysAllowed(events) }
}

/** The tools whose approval the user answered `always` in this session. */
function alwaysAllowed(events: readonly StoredEvent[]): Set<string> {
  const tools = new Map<string, string>()
  const always = new Set<string>()
  for (const event of events) {
    if (event.type === 'session/waiting') {
      const { request } = event.data as SessionEventMap['session/waiting']
      if (request.kind === 'approval') tools.set(request.id, String(request.tool))
    } else if (event.type === 'session/answer') {
      const { requestId, answer } = event.data as SessionEventMap['session/answer']
      const tool = tools.get(requestId)
      if (answer === 'always' && tool !== undefined) always.add(tool)
    }
  }
  return always
}

/** `INTERRUPTED` results for the calls of the last assistant turn that no stored `tool/result` answers. */
export function interruptedResults(events: readonly SessionEvent[]): StoredEvent[] {
  const index = events.findLastIndex((event) => event.type === 'assistant/message')
  if (index < 0) return []
  const calls = (events[index].data as SessionEventMap['assistant/message']).toolCalls ?? []
  const answered = new Set(
    events
      .slice(index + 1)
      .filter((event) => event.type === 'tool/result')
      .map((event) => (event.data as SessionEventMap['tool/result']).callId),
  )
  let seq = events.reduce((max, event) => Math.max(max, event.seq), 0)
  const time = new Date().toISOString()
  return calls
    .filter((call) => !answered.has(call.id))
    .map((call) => ({
      type: 'tool/result',
      seq: ++seq,
      time,
      data: {
        callId: call.id,
        name: call.name,
        content: [{ type: 'text', text: `Error: ${INTERRUPTED_TEXT}` }],
        isError: true,
        error: { message: INTERRUPTED_TEXT, code: 'INTERRUPTED' },
      },
    }))
}

/** Appends `session/end` to run `id` unless it already ended (a run failed for good, seen from any worker). */
export async function endStoredRun(store: SessionStore, id: string, end: { reason: string; message?: string }): Promise<void> {
  let events: StoredEvent[]
  try {
    events = (await store.read(id)).events
  } catch (error) {
    if (!(CordageError.is(error) && error.code === 'SESSION_NOT_FOUND')) throw error
    const log = SessionLog.createIn(store, { id })
    await log.close(end)
    return
  }
  if (events.some((event) => event.type === 'session/end')) return
  const seq = events.reduce((max, event) => Math.max(max, event.seq), 0)
  const repairs = interruptedResults(events as SessionEvent[])
  await store.append(id, [...repairs, { type: 'session/end', seq: seq + repairs.length + 1, time: new Date().toISOString(), data: end }])
}
