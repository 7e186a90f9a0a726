import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { connect } from './connection.js'
import { LiveFollower } from './live.js'
import { QueueError } from './errors.js'
import { injectTrace, withEnqueueSpan, withTrace } from './trace.js'
import { assertRunJobData, keysOf, resolveQueueSettings, type QueueSettings, type ResolvedQueueSettings, type RunJobData } from './types.js'
import { errorMessage } from '@cordage/core'

/** What `enqueue` takes: the run without the fields the queue fills in. */
export type RunRequest = Omit<RunJobData, 'enqueuedAt' | 'trace' | 'resumes' | 'owner'>

/** Where a queued run is, as BullMQ reports it (`unknown` once it was removed or never existed). */
export type RunState = 'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'unknown'

/**
 * The enqueuing side of the run queue (`cordage run --queue`, `cordage serve`): adds runs under their
 * session id and sends control messages (cancel) to whichever worker holds a run.
 */
export class RunQueue {
  readonly settings: ResolvedQueueSettings
  private readonly connection: Redis
  private readonly queue: Queue
  private closed = false
  /** Opened on the first `followText`: a subscribed connection can do nothing else. */
  private subscriber: Redis | undefined
  private readonly live: LiveFollower

  constructor(settings: QueueSettings) {
    this.settings = resolveQueueSettings(settings)
    this.connection = connect(this.settings.redis, this.settings.name, 'enqueuer')
    // Connection errors surface on the calls that need Redis; an idle queue only logs nothing.
    this.connection.on('error', () => {})
    this.queue = new Queue(this.settings.name, { connection: this.connection })
    this.queue.on('error', () => {})
    this.live = new LiveFollower(() => this.subscribed(), this.connection, this.settings.name)
  }

  /**
   * Run `id`'s streamed text as its worker publishes it, with the key of its turn (another key: another turn):
   * first the current turn's text so far, then each piece once (the stored `assistant/message` holds each
   * turn whole). Returns the unsubscribe. Nothing comes for a run no worker is streaming, or when Redis cannot be reached.
   */
  followText(id: string, listener: (text: string, turn: string) => void): () => void {
    this.assertOpen()
    return this.live.follow(id, listener)
  }

  private subscribed(): Redis {
    if (!this.subscriber) {
      this.subscriber = connect(this.settings.redis, this.settings.name, 'live')
      this.subscriber.on('error', () => {})
      this.subscriber.on('message', (channel: string, message: string) => this.live.message(channel, message))
    }
    return this.subscriber
  }

  /**
   * Adds a run; resolves to its id. Adding an id that is already queued is a no-op (BullMQ keeps the
   * first), so a retried request cannot start a run twice. The run carries the trace context of a
   * `send <queue>` producer span (see `withEnqueueSpan`).
   */
  async enqueue(request: RunRequest): Promise<string> {
    this.assertOpen()
    assertRunJobData({ ...request, enqueuedAt: 0 })
    await this.add(request, request.id)
    return request.id
  }

  /**
   * Enqueues run `id` again after its user answered the wait stored at seq `wait`: a worker takes it and
   * resumes the stored session (the answered call runs then). The job data is the one the worker kept when
   * the run stopped to wait (`RUN_NOT_KEPT` when Redis lost it), and its send span continues the first
   * enqueue's trace. Resuming the same wait twice is a no-op.
   */
  async resume(id: string, wait: number): Promise<void> {
    this.assertOpen()
    const keys = keysOf(this.settings.name)
    const kept = await this.call(() => this.connection.get(keys.kept(id)))
    if (kept === null)
      throw new QueueError(
        'RUN_NOT_KEPT',
        `run ${id} waits for an answer, but its job is no longer in Redis (was Redis flushed or restarted without persistence?)`,
      )
    const { enqueuedAt: _enqueued, trace, resumes: _resumes, ...request } = JSON.parse(kept) as RunJobData
    // The resumed run continues the trace its first enqueue started.
    await withTrace(trace, () => this.add({ ...request, resumes: wait }, `${id}.resume-${wait}`))
  }

  /** Forgets what a waiting run kept (it was cancelled while waiting). */
  async release(id: string): Promise<void> {
    this.assertOpen()
    await this.call(() => this.connection.del(keysOf(this.settings.name).kept(id)))
  }

  private async add(request: RunRequest & { resumes?: number }, jobId: string): Promise<void> {
    // The job carries the context of its own `send <queue>` span, a child of the enqueuer's active span if any.
    await withEnqueueSpan(this.settings.name, request.id, () => {
      const data: RunJobData = { ...request, enqueuedAt: Date.now(), trace: injectTrace() }
      return this.call(() =>
        this.queue.add('run', data, {
          jobId,
          // A run's own failures are recorded in its session; only a dead worker (a stall) makes it run again.
          attempts: 1,
          removeOnComplete: { age: 24 * 3600, count: 10_000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        }),
      )
    })
  }

  /**
   * Cancels run `id` wherever it is: a worker running it aborts it within moments (pub/sub), and a run
   * still queued or waiting ends as cancelled when a worker takes it. Resolves to false for an unknown run.
   */
  async cancel(id: string): Promise<boolean> {
    this.assertOpen()
    const keys = keysOf(this.settings.name)
    return this.call(async () => {
      const job = await this.queue.getJob(id)
      // A resumed run's first job may be gone (removed after a day) while the run goes on.
      if (!job && !(await this.connection.exists(keys.kept(id)))) return false
      await this.connection.set(keys.cancelled(id), '1', 'EX', 7 * 24 * 3600)
      await this.connection.publish(keys.control, JSON.stringify({ type: 'cancel', id }))
      if (job && (await job.getState()) === 'delayed') await job.promote().catch(() => {})
      return true
    })
  }

  /** Where run `id` is in the queue. */
  async state(id: string): Promise<RunState> {
    this.assertOpen()
    return this.call(async () => {
      const job = await this.queue.getJob(id)
      if (!job) return 'unknown'
      const state = await job.getState()
      return state === 'prioritized' || state === 'waiting-children' ? 'waiting' : (state as RunState)
    })
  }

  /** Removes the queue and every run in it, running ones included (decommissioning a queue, tests). */
  async obliterate(): Promise<void> {
    this.assertOpen()
    await this.call(() => this.queue.obliterate({ force: true }))
  }

  /** Closes the connections (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.queue.close().catch(() => {})
    await this.subscriber?.quit().catch(() => this.subscriber!.disconnect())
    await this.connection.quit().catch(() => this.connection.disconnect())
  }

  private assertOpen(): void {
    if (this.closed) throw new QueueError('QUEUE_CLOSED', 'the run queue is closed')
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (error instanceof QueueError) throw error
      throw new QueueError('QUEUE_UNAVAILABLE', `the run queue at ${this.settings.redis} failed: ${errorMessage(error)}`, {
        cause: error,
      })
    }
  }
}
