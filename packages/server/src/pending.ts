import { randomUUID } from 'node:crypto'
import type { Answer, PlanReview, Question } from '@cordage/services'
import { ServerError } from './errors.js'

/** A request of a run waiting for its user: a tool call to approve, questions to answer, a plan to review. */
export type PendingRequest =
  | { id: string; kind: 'approval'; tool: string; arguments: unknown; reason?: string }
  | { id: string; kind: 'question'; questions: Question[] }
  | { id: string; kind: 'plan'; plan: string }

/** The answer to each kind of request. */
export type RequestAnswer = 'allow' | 'deny' | 'always' | Answer[] | PlanReview

/** What a live run reports besides its stored events (the `delta`, `pending` and `resolved` SSE messages). */
export type LiveMessage = { type: 'delta'; text: string } | { type: 'pending'; request: PendingRequest } | { type: 'resolved'; requestId: string }

type Waiting = { request: PendingRequest; settle: (answer: RequestAnswer) => void; withdraw: () => void }

/** Requests answered or withdrawn are remembered (by id) this long, so a second answer is a 409 rather than a 404. */
const SETTLED_KEPT = 1024

/**
 * The requests one run is waiting on. `ask` adds one and resolves with its answer; `answer` checks an
 * answer against its request's kind; `signal` withdraws it (the call was cancelled).
 */
export class PendingBoard {
  private readonly waiting = new Map<string, Waiting>()
  private readonly settled = new Set<string>()

  constructor(private readonly publish: (message: LiveMessage) => void) {}

  /** Requests still waiting, oldest first. */
  list(): PendingRequest[] {
    return [...this.waiting.values()].map((entry) => entry.request)
  }

  get size(): number {
    return this.waiting.size
  }

  /** Adds a request and waits for its answer; rejects with `ABORTED` when `signal` aborts first. */
  ask<T extends RequestAnswer>(request: DistributiveOmit<PendingRequest, 'id'>, signal: AbortSignal): Promise<T> {
    const full = { id: randomUUID(), ...request } as PendingRequest
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) return reject(new ServerError('ABORTED', 'the call was cancelled before it could ask'))
      const withdraw = () => {
        signal.removeEventListener('abort', withdraw)
        if (!this.settle(full.id)) return
        reject(new ServerError('ABORTED', `request ${full.id} was withdrawn: the call or run was cancelled`))
      }
      signal.addEventListener('abort', withdraw, { once: true })
      this.waiting.set(full.id, {
        request: full,
        withdraw,
        settle: (answer) => {
          signal.removeEventListener('abort', withdraw)
          resolve(answer as T)
        },
      })
      this.publish({ type: 'pending', request: full })
    })
  }

  /** Answers request `requestId`: 404 `REQUEST_NOT_FOUND`, 409 `ALREADY_ANSWERED`, 400 `INVALID_ANSWER`. */
  answer(requestId: unknown, answer: unknown): void {
    if (typeof requestId !== 'string') throw new ServerError('INVALID_BODY', 'requestId: expected the id of a pending request (a string)')
    const entry = this.waiting.get(requestId)
    if (!entry) {
      if (this.settled.has(requestId)) throw new ServerError('ALREADY_ANSWERED', `request ${requestId} was already answered or withdrawn`)
      throw new ServerError('REQUEST_NOT_FOUND', `no pending request ${requestId}; GET /api/runs/<id>/pending lists them`)
    }
    const checked = checkAnswer(entry.request, answer)
    this.settle(requestId)
    entry.settle(checked)
  }

  /** Withdraws every request (the run ended): each waiting `ask` rejects with `ABORTED`. */
  clear(): void {
    for (const entry of this.waiting.values()) entry.withdraw()
  }

  private settle(id: string): boolean {
    if (!this.waiting.delete(id)) return false
    this.settled.add(id)
    if (this.settled.size > SETTLED_KEPT) this.settled.delete(this.settled.values().next().value!)
    this.publish({ type: 'resolved', requestId: id })
    return true
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** `answer` checked against what `request` asks (`INVALID_ANSWER` naming what was expected), normalised. */
export function checkAnswer(request: PendingRequest, answer: unknown): RequestAnswer {
  const fail = (expected: string): never => {
    throw new ServerError('INVALID_ANSWER', `answer to ${request.kind} request ${request.id}: expected ${expected}`)
  }
  if (request.kind === 'approval') {
    if (answer !== 'allow' && answer !== 'deny' && answer !== 'always') fail("'allow', 'deny' or 'always'")
    return answer as 'allow' | 'deny' | 'always'
  }
  if (request.kind === 'plan') {
    const review = answer as PlanReview
    if (!review || typeof review !== 'object' || typeof review.approved !== 'boolean') fail('{ approved: boolean, feedback?: string }')
    if (!review.approved && review.feedback !== undefined && typeof review.feedback !== 'string') fail('feedback to be a string')
    return review.approved ? { approved: true } : { approved: false, ...(review.feedback !== undefined && { feedback: review.feedback }) }
  }
  const expected = 'one { id, selected: string[], custom?: string } per question, in order'
  if (!Array.isArray(answer) || answer.length !== request.questions.length) fail(expected)
  return (answer as unknown[]).map((item, index) => {
    const entry = item as Answer
    if (!entry || typeof entry !== 'object' || entry.id !== request.questions[index].id) fail(expected)
    if (!Array.isArray(entry.selected) || !entry.selected.every((label) => typeof label === 'string')) fail(expected)
    if (entry.custom !== undefined && typeof entry.custom !== 'string') fail(expected)
    return { id: entry.id, selected: [...entry.selected], ...(entry.custom !== undefined && { custom: entry.custom }) }
  })
}
