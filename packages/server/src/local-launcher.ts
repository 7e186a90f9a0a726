import { AsyncLocalStorage } from 'node:async_hooks'
import type { Context, Fiber } from 'cordis'
import { Agent, SessionLog } from '@cordage/agent'
import { errorMessage, type ToolExec } from '@cordage/core'
import type { ApprovalService } from '@cordage/registry'
import type { Answer, InteractionService, ModelService, PlanReview } from '@cordage/services'
import { ServerError } from './errors.js'
import type { RunLauncher, RunRequest } from './launcher.js'
import { PendingBoard, type LiveMessage, type PendingRequest } from './pending.js'

/** Options of the in-process launcher. */
export interface LocalRunLauncherOptions {
  /** Working directory recorded in new sessions. */
  cwd: string
  /** System prompt of runs that name none. */
  system?: string
  /** Turn limit of runs that name none (default 50). */
  maxTurns?: number
  /** Runs live at once; a start beyond it is refused with 503 `TOO_MANY_RUNS` (default 16). */
  maxRuns?: number
  /** A fresh model replaying the recorded-model file `file` (absolute, already checked); without it cassettes are refused. */
  cassette?: (file: string) => ModelService | Promise<ModelService>
  /** What each run's session waits for at the end of a run (`SessionLog.durability`, default `process`). */
  durability?: 'process' | 'machine'
}

interface LiveRun {
  id: string
  controller: AbortController
  board: PendingBoard
  listeners: Set<(message: LiveMessage) => void>
  /** Tools the user answered `always` for, in this run. */
  always: Set<string>
  cancelled: boolean
  /** The current turn's streamed text so far (a client connecting mid-turn gets it as one delta). */
  turnText: string
  done: Promise<void>
}

/**
 * Runs agents in this process on the server's Context, one session each in `ctx.sessions`. It provides
 * the `approval` and `interaction` services while loaded: a request made inside a run (found through
 * the async context the run executes in, or the call's `exec.agent`) waits on that run's pending board
 * until answered over the API or withdrawn.
 */
export class LocalRunLauncher implements RunLauncher {
  private readonly runs = new Map<string, LiveRun>()
  /** Runs whose session is being closed (no longer live, not yet ended in the store). */
  private readonly ending = new Set<Promise<void>>()
  private readonly current = new AsyncLocalStorage<LiveRun>()
  private fiber: Fiber | undefined
  private closing = false

  private constructor(
    private readonly ctx: Context,
    private readonly options: LocalRunLauncherOptions,
  ) {}

  /** A launcher on `ctx`, with its `approval` and `interaction` services loaded (unloaded by `close`). */
  static async create(ctx: Context, options: LocalRunLauncherOptions): Promise<LocalRunLauncher> {
    const launcher = new LocalRunLauncher(ctx, options)
    launcher.fiber = await ctx.plugin({
      name: 'server-human',
      apply(inner: Context) {
        inner.provide('approval', launcher.approval())
        inner.provide('interaction', launcher.interaction())
      },
    })
    return launcher
  }

  async start(request: RunRequest): Promise<{ id: string }> {
    if (this.closing) throw new ServerError('SHUTTING_DOWN', 'the server is shutting down; no new runs')
    const maxRuns = this.options.maxRuns ?? 16
    if (this.runs.size >= maxRuns) throw new ServerError('TOO_MANY_RUNS', `${maxRuns} runs are live already; wait for one to end or cancel one`)
    const store = this.ctx.get('sessions')
    if (!store) throw new ServerError('STORE_UNAVAILABLE', 'no session store (ctx.sessions) is loaded')
    const model = request.cassette ? await this.cassetteModel(request.cassette) : (this.ctx.get('model') as ModelService | undefined)
    if (!model) throw new ServerError('NO_MODEL', 'no model is configured: configure one in cordage.yml, or start the run with a cassette')
    const session = SessionLog.createIn(store, { cwd: this.options.cwd, model: model.id })
    if (this.options.durability) session.durability = this.options.durability
    await session.ready
    const run: LiveRun = {
      id: session.id,
      controller: new AbortController(),
      board: new PendingBoard((message) => publish(message)),
      listeners: new Set(),
      always: new Set(),
      cancelled: false,
      turnText: '',
      done: Promise.resolve(),
    }
    const publish = (message: LiveMessage) => {
      for (const listener of run.listeners) listener(message)
    }
    const agent = new Agent(this.ctx, {
      model,
      session,
      system: request.options?.system ?? this.options.system,
      maxTurns: request.options?.maxTurns ?? this.options.maxTurns ?? 50,
      onEvent: (event) => {
        if (event.type === 'text/delta') {
          run.turnText += event.delta
          if (run.listeners.size) publish({ type: 'delta', text: event.delta })
        } else if (event.type === 'turn/start' || event.type === 'assistant/message') run.turnText = ''
      },
    })
    this.runs.set(run.id, run)
    run.done = this.current
      .run(run, () => agent.run(request.prompt, { signal: run.controller.signal }))
      .then(
        (result) => (run.cancelled ? { reason: 'cancelled' } : { reason: result.stopReason }),
        (error: unknown) => (run.cancelled ? { reason: 'cancelled' } : { reason: 'error', message: errorMessage(error) }),
      )
      .then(async (end) => {
        // Not live from here on: once a client sees session/end, the run answers as ended.
        this.runs.delete(run.id)
        run.board.clear()
        const closing = session.close(end)
        this.ending.add(closing)
        await closing.finally(() => this.ending.delete(closing))
      })
      .catch((error: unknown) => this.ctx.logger('server').warn(`run ${run.id}: the session could not be closed: ${errorMessage(error)}`))
      .finally(() => {
        this.runs.delete(run.id)
        run.listeners.clear()
      })
    return { id: run.id }
  }

  async cancel(id: string): Promise<void> {
    const run = this.live(id)
    run.cancelled = true
    run.controller.abort(new ServerError('ABORTED', 'the run was cancelled'))
    run.board.clear()
  }

  async pending(id: string): Promise<PendingRequest[]> {
    return this.live(id).board.list()
  }

  async answer(id: string, requestId: unknown, answer: unknown): Promise<void> {
    this.live(id).board.answer(requestId, answer)
  }

  status(id: string): { pending: number } | undefined {
    const run = this.runs.get(id)
    return run && { pending: run.board.size }
  }

  subscribe(id: string, listener: (message: LiveMessage) => void): (() => void) | undefined {
    const run = this.runs.get(id)
    if (!run) return undefined
    // Joining mid-turn: the text streamed so far, so the client's deltas start where the turn started.
    if (run.turnText) listener({ type: 'delta', text: run.turnText })
    run.listeners.add(listener)
    return () => run.listeners.delete(listener)
  }

  /** Settles when run `id` has ended and its session is closed (at once for a run not live). */
  whenDone(id: string): Promise<void> {
    return this.runs.get(id)?.done ?? Promise.resolve()
  }

  async close(): Promise<void> {
    this.closing = true
    const runs = [...this.runs.values()]
    for (const run of runs) await this.cancel(run.id).catch(() => {})
    await Promise.allSettled([...runs.map((run) => run.done), ...this.ending])
    await this.fiber?.dispose()
    this.fiber = undefined
  }

  private live(id: string): LiveRun {
    const run = this.runs.get(id)
    if (!run) throw new ServerError('RUN_NOT_FOUND', `no live run ${JSON.stringify(id)} here`)
    return run
  }

  private runOf(exec?: ToolExec): LiveRun | undefined {
    return this.current.getStore() ?? (exec?.agent !== undefined ? this.runs.get(exec.agent) : undefined)
  }

  private async cassetteModel(file: string): Promise<ModelService> {
    if (!this.options.cassette) throw new ServerError('INVALID_CASSETTE', 'this server replays no cassettes')
    try {
      return await this.options.cassette(file)
    } catch (error) {
      throw new ServerError('INVALID_CASSETTE', `cassette ${file}: ${errorMessage(error)}`, { cause: error })
    }
  }

  private approval(): ApprovalService {
    return {
      request: async (exec, reason) => {
        const run = this.runOf(exec)
        if (!run) return 'deny'
        if (run.always.has(exec.name)) return 'allow'
        const answer = await run.board
          .ask<'allow' | 'deny' | 'always'>(
            { kind: 'approval', tool: exec.name, arguments: exec.arguments, ...(reason !== undefined && { reason }) },
            exec.signal,
          )
          .catch(() => 'deny' as const)
        if (answer === 'always') run.always.add(exec.name)
        return answer === 'deny' ? 'deny' : 'allow'
      },
    }
  }

  private interaction(): InteractionService {
    const runOf = (): LiveRun => {
      const run = this.current.getStore()
      if (!run) throw new ServerError('INTERACTION_UNAVAILABLE', 'no user can be asked here: this agent was not started through the server')
      return run
    }
    return {
      ask: async (questions, signal) => runOf().board.ask<Answer[]>({ kind: 'question', questions: questions.map((question) => ({ ...question })) }, signal),
      approvePlan: async (plan, signal) => runOf().board.ask<PlanReview>({ kind: 'plan', plan }, signal),
    }
  }
}
