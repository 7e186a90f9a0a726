import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import { CordageError, failure, type ToolExecutionResult } from '@cordage/core'
import type { SessionEventMap, SessionLog } from '@cordage/agent'
import type { ApprovalService } from '@cordage/registry'
import type { PendingRequest } from '@cordage/server'
import type { Answer, InteractionService, PlanReview } from '@cordage/services'
import { errorMessage } from '../errors.js'
import type { Runtime } from '../runtime.js'

/** A run a worker holds: its session, what stops it, and what its user said or is asked. */
export interface OwnedRun {
  log: SessionLog
  /** Aborted when another worker took the run over: write nothing more. */
  lost: AbortController
  /** Aborted (code `WAITING`) once the run is stored as waiting for its user, or (`PARK_FAILED`) when that failed. */
  waiting: AbortController
  /** Keeps the run's job in Redis before it is stored as waiting (`RunContext.keep`). */
  keep(): Promise<void>
  /** The answer this start resumes with, until the call it answers takes it. */
  answer?: { request: PendingRequest; callId: string; answer: unknown }
  /** Tools the user answered `always` for, in this run. */
  always: Set<string>
  /** Direct calls executing now, and the results of those that finished (stored with a wait). */
  executing: Map<string, Executing>
  finished: Map<string, ToolExecutionResult>
  /** Set once a call asked: the run is being stored as waiting. */
  parking?: Promise<void>
}

/** A direct call in its body: settled once it finished, or once it asked its user (it waits, too). */
interface Executing {
  settled: Promise<unknown>
  asked(): void
}

/** The call a question comes from: which run, and whether it is one of the run's own calls (not nested, not a subagent's). */
interface CallScope {
  run: OwnedRun
  callId: string
  direct: boolean
}

/**
 * The fence and the human side of queued runs on a worker. Before one of a run's own calls executes,
 * everything the run logged so far (the model turn that asked for the call, earlier results) is stored: a
 * worker that dies mid-call leaves the call visible as unanswered (resumed as `INTERRUPTED`, never run
 * again), and no call is executed by a worker whose session can no longer be written (the store is down,
 * or another worker took the run over). A policy `ask` or a question from one of those calls stops the
 * run instead of holding the worker: the calls already executing finish, their results and the request are
 * stored (`session/waiting`), the run's job is kept in Redis, the agent stops and the job completes. Nothing
 * that starts after that runs, and nothing the stopping agent records after it is stored (the log is
 * closed). On resume the answer waits for the call it answers. Asks from nested calls (Code Mode) and
 * subagents cannot stop the run: an approval there is denied and a question fails `INTERACTION_UNAVAILABLE`,
 * as in any headless run.
 */
export function installHuman(runtime: Runtime, owned: Map<string, OwnedRun>): Promise<unknown> {
  const calls = new AsyncLocalStorage<CallScope>()
  runtime.ctx.on('tools/execute', async (exec, next) => {
    const run = exec.parent === undefined && exec.agent !== undefined ? owned.get(exec.agent) : undefined
    if (!run) {
      // A nested or subagent call inside one of a run's calls: its questions are not the run's to ask.
      const outer = calls.getStore()
      return outer?.direct ? calls.run({ ...outer, direct: false }, next) : next()
    }
    if (run.parking) {
      // Started after a call asked: not run now, and (the log being closed by then) not recorded either.
      await run.parking.catch(() => {})
      return failure(new CordageError('RUN_WAITING', 'the call was not run: the run stopped to wait for its user'))
    }
    try {
      await run.log.sync()
    } catch (error) {
      // A stored event this worker did not write: the run is someone else's now.
      if (CordageError.is(error) && error.code === 'SESSION_SEQ') run.lost.abort(error)
      return failure(new CordageError('SESSION_UNAVAILABLE', `the call was not run: the run's session could not be stored first (${errorMessage(error)})`))
    }
    const callId = exec.callId ?? ''
    // Only the current turn's results can go with a wait: earlier ones are not kept.
    const turn = new Set(turnCalls(run.log).map((call) => call.id))
    for (const id of run.finished.keys()) if (!turn.has(id)) run.finished.delete(id)
    const executing = calls.run({ run, callId, direct: true }, next)
    let asked!: () => void
    const askedOf = new Promise<void>((resolve) => (asked = resolve))
    run.executing.set(callId, { settled: Promise.race([executing.catch(() => {}), askedOf]), asked })
    try {
      const result = await executing
      run.finished.set(callId, result)
      return result
    } finally {
      run.executing.delete(callId)
    }
  })

  const approval: ApprovalService = {
    request: async (exec, reason) => {
      const run = exec.parent === undefined && exec.agent !== undefined ? owned.get(exec.agent) : undefined
      if (!run || exec.callId === undefined) return 'deny'
      const given = take(run, 'approval', exec.callId)
      if (given !== undefined) {
        if (given === 'always') run.always.add(exec.name)
        return given === 'deny' ? 'deny' : 'allow'
      }
      if (run.always.has(exec.name)) return 'allow'
      const request = { id: randomUUID(), kind: 'approval', tool: exec.name, arguments: exec.arguments, ...(reason !== undefined && { reason }) } as const
      await park(run, request, exec.callId).catch(() => {})
      // Not run here: the run stopped; the call runs (or is denied) when the run resumes with the answer.
      return 'deny'
    },
  }
  const ask = async <T>(request: DistributiveOmit<PendingRequest, 'id'>): Promise<T> => {
    const scope = calls.getStore()
    if (!scope?.direct)
      throw new CordageError(
        'INTERACTION_UNAVAILABLE',
        "no user can be asked here: a queued run asks its user only from its own calls, not from a nested call or a subagent's",
      )
    const given = take(scope.run, request.kind, scope.callId)
    if (given !== undefined) return given as T
    scope.run.executing.get(scope.callId)?.asked()
    await park(scope.run, { id: randomUUID(), ...request } as PendingRequest, scope.callId)
    throw new CordageError('ABORTED', 'the run stopped to wait for its user; this call runs again with the answer when the run resumes')
  }
  const interaction: InteractionService = {
    ask: (questions) => ask<Answer[]>({ kind: 'question', questions: questions.map((question) => ({ ...question })) }),
    approvePlan: (plan) => ask<PlanReview>({ kind: 'plan', plan }),
  }
  return runtime.load({
    name: 'worker-human',
    apply(ctx: Runtime['ctx']) {
      ctx.provide('approval', approval)
      ctx.provide('interaction', interaction)
    },
  })
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** The answer this start resumes with, if it answers this call's request of this kind (taken once). */
function take(run: OwnedRun, kind: string, callId: string): unknown {
  const answer = run.answer
  if (!answer || answer.callId !== callId || answer.request.kind !== kind) return undefined
  run.answer = undefined
  return answer.answer
}

/**
 * Stores run `run` as waiting for `request` (asked by call `callId`), once: the calls executing now
 * finish first, then their results, the request and nothing after are stored in one append, the log is
 * closed and the run's `waiting` signal aborts. A second ask meanwhile is not recorded (its call had not
 * run; it asks again when the run resumes).
 */
function park(run: OwnedRun, request: PendingRequest, callId: string): Promise<void> {
  if (run.parking) return run.parking
  run.parking = (async () => {
    // Effects already under way happen once, and their results are stored with the wait (a call that asked too waits).
    run.executing.get(callId)?.asked()
    await Promise.all([...run.executing.values()].map((executing) => executing.settled))
    await run.keep()
    const { log } = run
    const turn = log.events.findLastIndex((event) => event.type === 'assistant/message')
    const logged = new Set(
      log.events
        .slice(turn + 1)
        .filter((event) => event.type === 'tool/result')
        .map((event) => (event.data as SessionEventMap['tool/result']).callId),
    )
    // Results the agent holds back until the calls before them commit (it commits in model order).
    for (const call of turnCalls(log)) {
      const result = run.finished.get(call.id)
      if (result && !logged.has(call.id) && call.id !== callId) log.append('tool/result', resultRecord(call.id, call.name, result))
    }
    log.append('session/waiting', { request, callId })
    await log.close(false)
  })()
  run.parking.then(
    () => run.waiting.abort(new CordageError('WAITING', `waits for its user (${request.kind} ${request.id})`)),
    (error: unknown) => run.waiting.abort(new CordageError('PARK_FAILED', `the run could not be stored as waiting: ${errorMessage(error)}`, { cause: error })),
  )
  return run.parking
}

/** The calls of the run's last model turn. */
function turnCalls(log: SessionLog): readonly { id: string; name: string }[] {
  const turn = log.events.findLast((event) => event.type === 'assistant/message')
  return (turn?.data as SessionEventMap['assistant/message'] | undefined)?.toolCalls ?? []
}

/** A call's `tool/result` record, as the agent writes it. */
function resultRecord(callId: string, name: string, result: ToolExecutionResult): SessionEventMap['tool/result'] {
  const data: SessionEventMap['tool/result'] = { callId, name, content: result.content, isError: result.isError }
  if (result.isError) {
    const code = result.error.info?.code
    data.error = code === undefined ? { message: result.error.message } : { message: result.error.message, code }
  }
  if (result.meta !== undefined) data.meta = result.meta
  return data
}
