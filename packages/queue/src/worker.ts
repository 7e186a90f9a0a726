import { Worker, WaitingError, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { CordageError, errorMessage } from '@cordage/core'
import { connect } from './connection.js'
import { LiveWriter, liveKeys } from './live.js'
import { withTrace } from './trace.js'
import {
  assertRunJobData,
  isWorkerIdentity,
  keysOf,
  resolveQueueSettings,
  type QueueSettings,
  type ResolvedQueueSettings,
  type RunJobData,
  type WorkerIdentity,
} from './types.js'

/** One run as a worker hands it to `execute`. */
export interface RunContext {
  data: RunJobData
  /**
   * Aborts when the run is cancelled (reason code `CANCELLED`), handed back at shutdown (`HANDED_BACK`) or
   * taken over (`LOCK_LOST`: the worker could not renew its lock, so another may be running it): `execute`
   * stops the agent and returns; a handed-back run must leave its session open, a taken-over one must write
   * nothing more to it.
   */
  signal: AbortSignal
  /** 1 for the first start, 2 for the first resume after a dead worker or a hand-back, … */
  attempt: number
  /** The worker that took this run before (when it stamped its identity): a dead one may have left processes behind. */
  previousOwner?: WorkerIdentity
  /** Streams the run's text to its followers (`RunQueue.followText`): `delta` as the model writes, `nextTurn` once the turn is stored or a new one starts. */
  live: { delta(text: string): void; nextTurn(): void }
  /**
   * Keeps this run's job data in Redis (until it ends or is cancelled), so `RunQueue.resume` can enqueue it
   * again once its user answered: `execute` calls it before it stores the run as waiting, then resolves to
   * `'waiting'`, and the job completes without holding a slot.
   */
  keep(): Promise<void>
}

/** Options of a `RunWorker`. */
export interface RunWorkerOptions {
  /** Runs held at once (default 1). */
  concurrency?: number
  /** Runs (or resumes) one run; resolves when it ended or stopped for its signal, or to `'waiting'` when it waits for its user. */
  execute(run: RunContext): Promise<void | 'waiting'>
  /** A run failed for good (it kept killing its workers, or `execute` threw): record why. */
  onFailed?(id: string, reason: string): Promise<void>
  /** Problems that concern no single run (Redis errors), for the log. */
  onError?(error: Error): void
  /** Stamped on every run this worker takes (`RunJobData.owner`), for the worker that takes it next. */
  identity?: WorkerIdentity
}

/**
 * Takes runs from the queue and executes them, `concurrency` at a time. A dead worker's runs return to the
 * queue when its lock expires (BullMQ's stalled-job check) and are resumed elsewhere; past `attempts`
 * starts without finishing, a run fails with the reason. Cancel messages reach the run's worker over
 * Redis pub/sub.
 */
export class RunWorker {
  readonly settings: ResolvedQueueSettings
  private readonly worker: Worker
  private readonly subscriber: Redis
  private readonly commands: Redis
  /** BullMQ's own connection: a connection passed in is the caller's to close (BullMQ closes only its duplicates). */
  private readonly connection: Redis
  private readonly active = new Map<string, AbortController>()
  /** The same controllers by BullMQ job id (a resume's job id is not its run's id). */
  private readonly byJob = new Map<string, AbortController>()
  private closing: Promise<void> | undefined
  private handingBack = false

  constructor(
    settings: QueueSettings,
    private readonly options: RunWorkerOptions,
  ) {
    this.settings = resolveQueueSettings(settings)
    const keys = keysOf(this.settings.name)
    const onError = (error: Error) => options.onError?.(error)
    this.commands = connect(this.settings.redis, this.settings.name, 'worker')
    this.commands.on('error', onError)
    this.subscriber = connect(this.settings.redis, this.settings.name, 'control')
    this.subscriber.on('error', onError)
    this.subscriber.on('message', (_channel: string, message: string) => this.control(message))
    void this.subscriber.subscribe(keys.control).catch(onError)
    this.connection = connect(this.settings.redis, this.settings.name, 'jobs')
    this.connection.on('error', onError)
    this.worker = new Worker(this.settings.name, (job, token) => this.process(job, token), {
      connection: this.connection,
      concurrency: options.concurrency ?? 1,
      lockDuration: this.settings.lockDuration,
      stalledInterval: this.settings.stalledInterval,
      // A stall is a start that did not finish: `attempts` starts in all.
      maxStalledCount: this.settings.attempts - 1,
    })
    this.worker.on('error', onError)
    // The lock expired before it was renewed (a stalled event loop, a Redis outage): the stalled check may
    // already have handed the run to another worker, so this one stops rather than run it twice.
    this.worker.on('lockRenewalFailed', (jobIds: string[]) => {
      for (const jobId of jobIds)
        this.byJob.get(jobId)?.abort(new CordageError('LOCK_LOST', 'this worker lost its lock on the run; another worker may be running it'))
    })
    this.worker.on('failed', (job, error) => {
      if (!job?.data?.id) return
      const reason = /stalled more than allowable limit/.test(error.message)
        ? `the run was started ${this.settings.attempts} times and its worker stopped each time (${error.message})`
        : error.message
      void options.onFailed?.(job.data.id, reason).catch(onError)
    })
  }

  /** The ids of the runs this worker holds now. */
  get running(): string[] {
    return [...this.active.keys()]
  }

  /** Settles once the worker is connected and taking runs. */
  async ready(): Promise<void> {
    await this.worker.waitUntilReady()
  }

  /**
   * Stops taking runs; running ones may finish for `graceMs`, then they are aborted and handed back to
   * the queue (another worker resumes them; a hand-back is not a failed attempt). Idempotent.
   */
  close(graceMs = 10_000): Promise<void> {
    this.closing ??= (async () => {
      const timer = setTimeout(() => {
        this.handingBack = true
        for (const controller of this.active.values())
          controller.abort(new CordageError('HANDED_BACK', 'the worker is shutting down; the run goes back to the queue'))
      }, graceMs)
      try {
        await this.worker.close()
      } finally {
        clearTimeout(timer)
        await this.subscriber.quit().catch(() => this.subscriber.disconnect())
        await this.commands.quit().catch(() => this.commands.disconnect())
        await this.connection.quit().catch(() => this.connection.disconnect())
      }
    })()
    return this.closing
  }

  private control(message: string): void {
    let parsed: { type?: unknown; id?: unknown }
    try {
      parsed = JSON.parse(message)
    } catch {
      return
    }
    if (parsed?.type === 'cancel' && typeof parsed.id === 'string') this.active.get(parsed.id)?.abort(new CordageError('CANCELLED', 'the run was cancelled'))
  }

  private async process(job: Job, token: string | undefined): Promise<void> {
    assertRunJobData(job.data)
    const data = job.data
    const controller = new AbortController()
    // A run cancelled while queued (or before this worker subscribed) still ends as cancelled.
    if (await this.commands.exists(keysOf(this.settings.name).cancelled(data.id))) controller.abort(new CordageError('CANCELLED', 'the run was cancelled'))
    if (this.handingBack) controller.abort(new CordageError('HANDED_BACK', 'the worker is shutting down; the run goes back to the queue'))
    this.active.set(data.id, controller)
    this.byJob.set(job.id!, controller)
    const previousOwner = isWorkerIdentity(data.owner) ? data.owner : undefined
    const identity = this.options.identity
    if (identity) {
      // Also in the copy a waiting run keeps, so whoever resumes it knows which worker parked it.
      data.owner = identity
      await job
        .updateData(data)
        .catch((error: unknown) => this.options.onError?.(new Error(`run ${data.id}: could not record its worker: ${errorMessage(error)}`)))
    }
    const kept = keysOf(this.settings.name).kept(data.id)
    let keeps = data.resumes !== undefined
    const keep = async () => {
      keeps = true
      await this.commands.set(kept, JSON.stringify(data))
    }
    let outcome: void | 'waiting'
    const live = new LiveWriter(this.commands, liveKeys(this.settings.name, data.id), (error) =>
      this.options.onError?.(new Error(`run ${data.id}: live text: ${errorMessage(error)}`)),
    )
    try {
      const run: RunContext = { data, signal: controller.signal, attempt: job.attemptsStarted || 1, keep, live, ...(previousOwner && { previousOwner }) }
      outcome = await withTrace(data.trace, () => this.options.execute(run))
    } finally {
      this.active.delete(data.id)
      this.byJob.delete(job.id!)
      await live.close()
    }
    // No longer this worker's job: its new owner completes it (and needs its kept data).
    if ((controller.signal.reason as CordageError | undefined)?.code === 'LOCK_LOST') throw new WaitingError()
    // A run that kept its job to wait and no longer waits (it ended) needs it no more; most runs never kept one.
    const handedBack = (controller.signal.reason as CordageError | undefined)?.code === 'HANDED_BACK'
    if (keeps && outcome !== 'waiting' && !handedBack) await this.commands.del(kept)
    if (handedBack) {
      await job.moveToWait(token)
      throw new WaitingError()
    }
  }
}
