import { errorMessage } from '@cordage/core'
import { TextDecoder } from 'node:util'
import { OutputBuffer } from './buffer.js'
import { ForeignJobError, JobOffsetError, UnknownJobError } from './errors.js'
import { mayUse, type AgentLineage, type JobExit, type JobHandle, type JobRead, type JobSnapshot, type JobStartOptions, type JobState } from '@cordage/services'

/** Limits of a `JobTable`. */
export interface JobTableOptions {
  headChars: number
  tailChars: number
  maxFinishedJobs: number
  killTimeoutMs: number
}

/** The lineage of the agent making a tool call (`exec.agent`), as the `subagents` service knows it. */
export type CallerLineage = (agent: string | undefined) => AgentLineage

/** A job as the table keeps it: public fields, bounded output, the owner's kill and the waiters. */
interface JobRecord {
  id: string
  kind: string
  title: string
  /** The lineage of the agent that started it; undefined when no agent did. */
  owner: AgentLineage | undefined
  state: JobState
  exitCode: number | null
  signal: string | null
  error: string | null
  startedAt: number
  endedAt: number | null
  buffer: OutputBuffer
  decoders: Record<'stdout' | 'stderr', TextDecoder>
  kill?: (reason: string) => void | Promise<void>
  controller: AbortController
  /** Set once a stop was requested: the end is then recorded as `killed`. */
  stopping?: Promise<void>
  stopRequested: boolean
  waiters: Set<() => void>
  settled: Promise<void>
  onSettled: () => void
  release?: () => unknown
}

/** The job store behind `ctx.jobs` (Cordis-free): lifecycle, bounded output, waiting and snapshots. */
export class JobTable {
  private readonly jobs = new Map<string, JobRecord>()
  private counter = 0

  constructor(
    readonly options: JobTableOptions,
    private readonly completed: (job: JobSnapshot, owner: AgentLineage | undefined) => void,
    private readonly warn: (message: string) => void,
  ) {}

  /** Starts a job; `owner` is the lineage of the agent that started it (`options.agent`, resolved by the caller). */
  start(options: JobStartOptions, owner?: AgentLineage): JobHandle {
    let onSettled!: () => void
    const settled = new Promise<void>((resolve) => (onSettled = resolve))
    const record: JobRecord = {
      id: `job_${++this.counter}`,
      kind: String(options.kind),
      title: String(options.title),
      owner,
      state: 'running',
      exitCode: null,
      signal: null,
      error: null,
      startedAt: Date.now(),
      endedAt: null,
      buffer: new OutputBuffer(this.options.headChars, this.options.tailChars),
      decoders: { stdout: new TextDecoder(), stderr: new TextDecoder() },
      kill: options.kill,
      controller: new AbortController(),
      stopRequested: false,
      waiters: new Set(),
      settled,
      onSettled,
    }
    this.jobs.set(record.id, record)
    return {
      id: record.id,
      signal: record.controller.signal,
      write: (chunk, stream = 'stdout') => {
        if (record.state !== 'running') return
        const text = typeof chunk === 'string' ? chunk : record.decoders[stream].decode(chunk, { stream: true })
        if (!text) return
        record.buffer.append(text)
        this.wake(record)
      },
      exit: (result = {}) => this.settle(record, record.stopRequested ? 'killed' : 'exited', result),
      fail: (error) => this.settle(record, record.stopRequested ? 'killed' : 'failed', {}, error),
    }
  }

  /** Ties a release callback (the owner's effect) to the job; it runs once the job ends. */
  bindRelease(id: string, release: () => unknown): void {
    const record = this.jobs.get(id)
    if (!record) return
    if (record.state === 'running') record.release = release
    else void release()
  }

  snapshot(id: string): JobSnapshot {
    return toSnapshot(this.record(id))
  }

  list(): JobSnapshot[] {
    return [...this.jobs.values()].map(toSnapshot)
  }

  /** Snapshots of the jobs the agent `caller` may use (see `mayUse`), oldest first. */
  visible(caller: AgentLineage): JobSnapshot[] {
    return [...this.jobs.values()].filter((job) => mayUse(job.owner, caller)).map(toSnapshot)
  }

  /**
   * Throws unless the agent `caller` may use job `id`: `UNKNOWN_JOB` (listing the caller's own jobs)
   * when there is no such job, `FOREIGN_JOB` when it belongs to another agent.
   */
  checkAccess(id: string, caller: AgentLineage): void {
    const record = this.jobs.get(id)
    if (!record)
      throw new UnknownJobError(
        id,
        this.visible(caller).map((job) => job.id),
      )
    if (!mayUse(record.owner, caller)) throw new ForeignJobError(id)
  }

  /**
   * Stops a running job: aborts its signal, calls the owner's `kill`, then waits for the owner to
   * report the end (at most `killTimeoutMs`, after which the job is recorded as killed anyway).
   * Returns whether it was running.
   */
  async kill(id: string, reason = 'killed on request'): Promise<boolean> {
    const record = this.record(id)
    if (record.state !== 'running') return false
    if (!record.stopping) {
      record.stopRequested = true
      record.stopping = this.stop(record, reason)
    }
    await record.stopping
    return true
  }

  /** Stops every running job (service unload). */
  async killAll(reason: string): Promise<void> {
    await Promise.all([...this.jobs.values()].filter((job) => job.state === 'running').map((job) => this.kill(job.id, reason)))
  }

  /** Reads up to `max` characters from `offset` (default 0). */
  read(id: string, offset: number, max: number): JobRead {
    const record = this.record(id)
    const end = record.buffer.end
    if (offset > end) throw new JobOffsetError(id, offset, end)
    const span = record.buffer.read(offset, max)
    const nextOffset = span.offset + span.text.length
    return { ...span, nextOffset, more: nextOffset < record.buffer.end, job: toSnapshot(record) }
  }

  /** Resolves once output exists past `offset`, the job ended, `ms` passed or `signal` aborted. */
  async wait(id: string, offset: number, ms: number, signal?: AbortSignal): Promise<void> {
    const record = this.record(id)
    if (record.state !== 'running' || record.buffer.end > offset || ms <= 0 || signal?.aborted) return
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        record.waiters.delete(check)
        resolve()
      }
      const check = () => {
        if (record.state !== 'running' || record.buffer.end > offset) done()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done, { once: true })
      record.waiters.add(check)
    })
  }

  private record(id: string): JobRecord {
    const record = this.jobs.get(id)
    if (!record) throw new UnknownJobError(id, [...this.jobs.keys()])
    return record
  }

  private async stop(record: JobRecord, reason: string): Promise<void> {
    record.controller.abort(new Error(reason))
    try {
      await record.kill?.(reason)
    } catch (error) {
      this.warn(`killing ${record.id} (${record.title}) failed: ${errorMessage(error)}`)
    }
    if (record.state !== 'running') return
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), this.options.killTimeoutMs)))
    const outcome = await Promise.race([record.settled, timeout])
    clearTimeout(timer)
    if (outcome === 'timeout' && record.state === 'running') {
      this.warn(`${record.id} (${record.title}) did not report its end within ${this.options.killTimeoutMs} ms of being killed; recorded as killed`)
      this.settle(record, 'killed', {})
    }
  }

  private settle(record: JobRecord, state: JobState, result: JobExit, error?: unknown): void {
    if (record.state !== 'running') return
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = record.decoders[stream].decode()
      if (rest) record.buffer.append(rest)
    }
    record.state = state
    record.exitCode = typeof result.exitCode === 'number' ? result.exitCode : null
    record.signal = typeof result.signal === 'string' ? result.signal : null
    if (error !== undefined) record.error = errorMessage(error)
    record.endedAt = Date.now()
    record.kill = undefined
    record.onSettled()
    this.wake(record)
    const release = record.release
    record.release = undefined
    void release?.()
    this.evict()
    this.completed(toSnapshot(record), record.owner)
  }

  private wake(record: JobRecord): void {
    // Deleting the current entry while iterating a Set is safe; waiters remove themselves.
    for (const waiter of record.waiters) waiter()
  }

  private evict(): void {
    const finished = [...this.jobs.values()].filter((job) => job.state !== 'running')
    for (const job of finished.slice(0, Math.max(0, finished.length - this.options.maxFinishedJobs))) this.jobs.delete(job.id)
  }
}

function toSnapshot(record: JobRecord): JobSnapshot {
  return {
    id: record.id,
    kind: record.kind,
    title: record.title,
    state: record.state,
    exitCode: record.exitCode,
    signal: record.signal,
    error: record.error,
    startedAt: new Date(record.startedAt).toISOString(),
    endedAt: record.endedAt === null ? null : new Date(record.endedAt).toISOString(),
    durationMs: Math.max(0, (record.endedAt ?? Date.now()) - record.startedAt),
    outputChars: record.buffer.end,
    droppedChars: record.buffer.dropped,
  }
}
