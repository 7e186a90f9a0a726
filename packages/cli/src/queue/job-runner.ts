import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { CordageError } from '@cordage/core'
import { Agent, type ModelService } from '@cordage/agent'
import type { RunContext, RunJobData, WorkerIdentity } from '@cordage/queue'
import type { SessionStore } from '@cordage/services'
import { parseConfig, type CordageConfig } from '../config.js'
import { errorMessage } from '../errors.js'
import { chooseModel, startModel } from '../model.js'
import type { Output } from '../output.js'
import { startRuntime, type Runtime } from '../runtime.js'
import { defaultSystem } from '../commands/agent-setup.js'
import { installHuman, type OwnedRun } from './park.js'
import { endOrphansOf } from './orphans.js'
import { endStoredRun, openRun } from './resume.js'

/** A loaded runtime that runs queued runs: plugins, model, and the sessions of the runs it holds. */
interface RunRuntime {
  runtime: Runtime
  model: ModelService
  store: SessionStore
  /** The runs in progress here, by agent name (the run id): their session, what stops them, what their user said. */
  owned: Map<string, OwnedRun>
}

/** Where a worker runs: its directory, its own cordage.yml (store, queue) and where it reports. */
export interface JobRunnerOptions {
  cwd: string
  config: CordageConfig
  output: Output
  env: NodeJS.ProcessEnv
  verbose?: boolean
  /** This worker process (see `claimWorkerIdentity`): runs a dead worker of this machine held have its orphans ended first. */
  identity?: WorkerIdentity
}

/**
 * Executes queued runs with the same agent loop and plugins as `cordage run`. Runs that use the same
 * cordage.yml share one runtime (plugins loaded once per worker); a run replaying a cassette gets its own,
 * since a cassette plays its turns in order.
 */
export class JobRunner {
  private readonly runtimes = new Map<string, Promise<RunRuntime>>()

  constructor(private readonly options: JobRunnerOptions) {}

  /**
   * Loads the runtime of `config` (the text of a cordage.yml) now, so runs that carry it start at once; a
   * worker warms its own before taking runs (loading plugins blocks its event loop for a moment, and its
   * locks must keep being renewed).
   */
  async warm(config: string | undefined): Promise<void> {
    await this.runtimeFor({ id: 'warm', prompt: '', enqueuedAt: 0, ...(config !== undefined && { config }) })
  }

  /**
   * Runs or resumes one queued run until it ends, is cancelled, is handed back (its session left open), or
   * stops to wait for its user (resolves `'waiting'`: stored as waiting, holding no slot).
   */
  async execute(run: RunContext): Promise<void | 'waiting'> {
    const { data, signal } = run
    const { output, identity } = this.options
    if (run.previousOwner && identity) await endOrphansOf(run.previousOwner, identity, output)
    const shared = data.cassette === undefined
    const loaded = shared ? this.runtimeFor(data) : this.start(data)
    const context = await loaded
    const { runtime, model, store, owned } = context
    try {
      const opened = await openRun(store, data.id, this.options.cwd, model.id)
      if (!opened) return
      if (opened === 'waiting') {
        // Stored as waiting by a worker that stopped before its job completed: it stays so.
        await run.keep()
        return 'waiting'
      }
      const { log } = opened
      output.error(`run ${data.id} ${run.attempt > 1 ? `resumed (start ${run.attempt})` : 'started'}`)
      const reason = (signal.reason as CordageError | undefined)?.code
      if (reason === 'CANCELLED' || opened.answered) return await log.close({ reason: reason === 'CANCELLED' ? 'cancelled' : 'completed' })
      if (reason === 'HANDED_BACK') return await log.close(false)
      if (reason === 'LOCK_LOST') {
        log.abandon()
        output.error(`run ${data.id} left to the worker that took it over (${errorMessage(signal.reason)})`)
        return
      }
      const agentSettings = runtime.config.agent
      // Another worker took the run over (this one lost its lock): stop at once, and write nothing more.
      const lost = new AbortController()
      const waiting = new AbortController()
      // From then on nothing of this worker's may land among the new owner's events (what it has not
      // stored is dropped, as if it had died: the new owner records an unfinished call INTERRUPTED).
      lost.signal.addEventListener('abort', () => log.abandon(), { once: true })
      const onAbort = () => (signal.reason as CordageError | undefined)?.code === 'LOCK_LOST' && log.abandon()
      signal.addEventListener('abort', onAbort, { once: true })
      owned.set(data.id, {
        log,
        lost,
        waiting,
        keep: run.keep,
        always: opened.always,
        executing: new Map(),
        finished: new Map(),
        ...(opened.resume && { answer: opened.resume }),
      })
      if (opened.resume) {
        // From here on a call of the last turn without a result had started (a crash leaves it INTERRUPTED).
        log.append('session/resumed', { requestId: opened.resume.request.id })
        await log.sync()
        output.error(`run ${data.id} resumes with its user's answer to ${opened.resume.request.kind} ${opened.resume.request.id}`)
      }
      const agent = new Agent(runtime.ctx, {
        model,
        system: data.options?.system ?? agentSettings.system ?? defaultSystem(this.options.cwd),
        maxTurns: data.options?.maxTurns ?? agentSettings.maxTurns,
        session: log,
        ...(agentSettings.compaction && { compaction: agentSettings.compaction }),
        // Followers (serve's SSE, the studio) see the text as it streams, as for a run in process; a finished
        // turn is stored, so a follower joining during its tool calls gets none of it as live text.
        onEvent: (event) => {
          if (event.type === 'text/delta') run.live.delta(event.delta)
          else if (event.type === 'turn/start' || event.type === 'assistant/message') run.live.nextTurn()
        },
      })
      let end: { reason: string; message?: string }
      try {
        const result = await agent.run(opened.needsPrompt ? data.prompt : undefined, {
          signal: AbortSignal.any([signal, lost.signal, waiting.signal]),
          finishCalls: opened.resume !== undefined,
        })
        end = { reason: result.stopReason }
      } catch (error) {
        end = { reason: 'error', message: errorMessage(error) }
      }
      const stopped = (signal.reason as CordageError | undefined)?.code
      if (lost.signal.aborted || stopped === 'LOCK_LOST') {
        output.error(`run ${data.id} left to the worker that took it over (${errorMessage(lost.signal.aborted ? lost.signal.reason : signal.reason)})`)
        return
      }
      if (waiting.signal.aborted) {
        const reason = waiting.signal.reason as CordageError
        if (reason.code !== 'WAITING') throw reason
        // Cancelled while it was being stored as waiting: it ends here rather than wait.
        if (stopped === 'CANCELLED') return await endStoredRun(store, data.id, { reason: 'cancelled' })
        output.error(`run ${data.id} ${reason.message}; its worker slot is free`)
        return 'waiting'
      }
      if (stopped === 'HANDED_BACK') {
        await log.close(false)
        output.error(`run ${data.id} handed back to the queue`)
        return
      }
      if (stopped === 'CANCELLED') end = { reason: 'cancelled' }
      try {
        await log.close(end)
      } catch (error) {
        if (!(CordageError.is(error) && error.code === 'SESSION_SEQ')) throw error
        output.error(`run ${data.id} left to the worker that took it over (${errorMessage(error)})`)
        return
      }
      output.error(`run ${data.id} ended: ${end.reason}${end.message ? ` (${end.message})` : ''}`)
    } finally {
      owned.delete(data.id)
      if (!shared) await runtime.dispose()
    }
  }

  /** Unloads every runtime (after the worker has stopped running). */
  async close(): Promise<void> {
    const loaded = [...this.runtimes.values()]
    this.runtimes.clear()
    for (const context of await Promise.allSettled(loaded)) if (context.status === 'fulfilled') await context.value.runtime.dispose()
  }

  private runtimeFor(data: RunJobData): Promise<RunRuntime> {
    const key = data.config ?? ''
    let loaded = this.runtimes.get(key)
    if (!loaded) {
      loaded = this.start(data)
      // A runtime that failed to start is not kept: the next run tries again (the config may be fixed).
      loaded.catch(() => this.runtimes.delete(key))
      this.runtimes.set(key, loaded)
    }
    return loaded
  }

  private async start(data: RunJobData): Promise<RunRuntime> {
    const { cwd, output, env, verbose } = this.options
    const own = this.options.config
    // The run's cordage.yml decides plugins, model and agent; where sessions live is the worker's to say.
    const parsed = data.config !== undefined ? parseConfig(parseYaml(data.config) ?? {}, join(cwd, 'cordage.yml')) : own
    const config: CordageConfig = { ...parsed, store: own.store, queue: undefined }
    const runtime = await startRuntime({ cwd, output, verbose, config })
    try {
      const choice = chooseModel(config.model, { cassette: data.cassette }, cwd, config.baseDir, env)
      const { model } = await startModel(runtime, choice)
      const store = runtime.ctx.get('sessions') as SessionStore | undefined
      if (!store) throw new CordageError('QUEUE_NEEDS_STORE', 'a worker needs store: { postgres: <url> } in its cordage.yml')
      const owned: RunRuntime['owned'] = new Map()
      await installHuman(runtime, owned)
      return { runtime, model, store, owned }
    } catch (error) {
      await runtime.dispose()
      throw error
    }
  }
}
