import { CordageError } from '@cordage/core'
import type { SessionEventMap } from '@cordage/agent'
import type { RunQueue } from '@cordage/queue'
import { checkAnswer, ServerError, type PendingRequest } from '@cordage/server'
import type { SessionStore, StoredEvent } from '@cordage/services'

/** Where a queued run stands with its user, read from its stored events. */
export type WaitState =
  | { kind: 'none' }
  /** Stopped for `request` (call `callId`), stored at seq `seq`; no answer yet. */
  | { kind: 'waiting'; request: PendingRequest; callId: string; seq: number }
  /** Answered and not yet resumed: the next worker runs the call with `answer`. */
  | { kind: 'answered'; request: PendingRequest; callId: string; seq: number; answer: unknown }
  /** A worker resumed it with its answer (calls without a result after this had started). */
  | { kind: 'resumed'; requestId: string }

/** The state of the run's last wait (`none`: it never waited, or the session ended). */
export function waitState(events: readonly StoredEvent[]): WaitState {
  const index = events.findLastIndex((event) => event.type === 'session/waiting')
  if (index < 0 || events.at(-1)?.type === 'session/end') return { kind: 'none' }
  const { request, callId } = events[index].data as SessionEventMap['session/waiting']
  const after = events.slice(index + 1)
  const resumed = after.find((event) => event.type === 'session/resumed')
  if (resumed) return { kind: 'resumed', requestId: (resumed.data as SessionEventMap['session/resumed']).requestId }
  const answer = after.find((event) => event.type === 'session/answer')
  const base = { request: request as PendingRequest, callId, seq: events[index].seq }
  return answer ? { kind: 'answered', ...base, answer: (answer.data as SessionEventMap['session/answer']).answer } : { kind: 'waiting', ...base }
}

/** Whether request `requestId` was ever asked in the session (and so was answered or withdrawn since). */
function wasAsked(events: readonly StoredEvent[], requestId: string): boolean {
  return events.some((event) => event.type === 'session/waiting' && (event.data as SessionEventMap['session/waiting']).request.id === requestId)
}

const lastSeq = (events: readonly StoredEvent[]) => events.reduce((max, event) => Math.max(max, event.seq), 0)

/**
 * Answers the request run `id` waits on: the answer is stored in its session (so it survives while no
 * worker runs), then the run is enqueued again and whichever worker is free resumes it. Two answers
 * racing are ordered by the store (the second's append finds the seq taken): one resumes the run, the
 * other is `ALREADY_ANSWERED`. Resolves `false` when the run is not waiting (the caller answers 409/404).
 */
export async function answerWaiting(store: SessionStore, queue: RunQueue, id: string, requestId: unknown, answer: unknown): Promise<boolean> {
  if (typeof requestId !== 'string') throw new ServerError('INVALID_BODY', 'requestId: expected the id of a pending request (a string)')
  for (let attempt = 0; ; attempt++) {
    const { events } = await store.read(id)
    const state = waitState(events)
    if (state.kind !== 'waiting' || state.request.id !== requestId) {
      if (state.kind === 'answered' && state.request.id === requestId) {
        // Answered, and perhaps not enqueued (Redis failed then): enqueuing the same wait again is a no-op.
        await queue.resume(id, state.seq)
      }
      if (wasAsked(events, requestId)) throw new ServerError('ALREADY_ANSWERED', `request ${requestId} was already answered or withdrawn`)
      if (state.kind === 'waiting') throw new ServerError('REQUEST_NOT_FOUND', `no pending request ${requestId}; GET /api/runs/${id}/pending lists them`)
      return false
    }
    const checked = checkAnswer(state.request, answer)
    const event = { type: 'session/answer', seq: lastSeq(events) + 1, time: new Date().toISOString(), data: { requestId, answer: checked } }
    try {
      await store.append(id, [event])
    } catch (error) {
      // Another answer (or a cancel) was stored first: read again and say so.
      if (CordageError.is(error) && error.code === 'SESSION_SEQ' && attempt === 0) continue
      throw error
    }
    await queue.resume(id, state.seq)
    return true
  }
}

/**
 * Cancels run `id` if it is waiting for its user: its session ends `cancelled` at once (no worker holds
 * it) and what it kept in Redis is dropped. Resolves `false` when it is not waiting (cancel it through the
 * queue). A cancel racing an answer is ordered by the store as two answers are.
 */
export async function cancelWaiting(store: SessionStore, queue: RunQueue, id: string): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    const { events } = await store.read(id)
    if (waitState(events).kind !== 'waiting') return false
    const end = { type: 'session/end', seq: lastSeq(events) + 1, time: new Date().toISOString(), data: { reason: 'cancelled' } }
    try {
      await store.append(id, [end])
    } catch (error) {
      if (CordageError.is(error) && error.code === 'SESSION_SEQ' && attempt === 0) continue
      throw error
    }
    await queue.release(id)
    return true
  }
}
