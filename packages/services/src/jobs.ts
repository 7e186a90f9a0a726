import Schema from 'schemastery'
import type { Infer } from '@cordage/core'

/** A job's lifecycle: `running`, then `exited` (ended on its own), `killed` (stopped through the service) or `failed`. */
export type JobState = 'running' | 'exited' | 'killed' | 'failed'

/** The public, JSON snapshot of a job: what tools return and `jobs/completed` carries (no owner bookkeeping). */
export const JobSnapshotSchema = Schema.object({
  id: Schema.string().required().description('Job id, e.g. "job_3".'),
  kind: Schema.string().required().description('What started it: "bash", "terminal", "subagent", …'),
  title: Schema.string().required().description('What the job runs (the command, for bash).'),
  state: Schema.union(['running', 'exited', 'killed', 'failed'] as const).required(),
  exitCode: Schema.union([Schema.number(), Schema.const(null)]).required(),
  signal: Schema.union([Schema.string(), Schema.const(null)]).required(),
  error: Schema.union([Schema.string(), Schema.const(null)])
    .required()
    .description('Why a failed job failed.'),
  startedAt: Schema.string().required().description('ISO 8601.'),
  endedAt: Schema.union([Schema.string(), Schema.const(null)]).required(),
  durationMs: Schema.natural().required().description('Until now for a running job.'),
  outputChars: Schema.natural().required().description('Characters of output written so far: the offset after the last one.'),
  droppedChars: Schema.natural().required().description('Characters no longer kept (between the kept head and tail).'),
})

/** A public job snapshot. */
export type JobSnapshot = Infer<typeof JobSnapshotSchema>

/** How an owner ended a job: its exit code and/or the signal that ended it. */
export interface JobExit {
  exitCode?: number | null
  signal?: string | null
}

/** What an owner supplies to start a job. */
export interface JobStartOptions {
  /** Short family name, e.g. `'bash'`. */
  kind: string
  /** One line saying what runs, e.g. the command. */
  title: string
  /**
   * Stops the work; resolve only once it has stopped (and report `exit` or `fail` before or after).
   * Called at most once, by `job_kill`, `jobs.kill`, or unloading the owner or the jobs service.
   */
  kill?: (reason: string) => void | Promise<void>
  /**
   * The `exec.agent` of the tool call that started the job: the job belongs to that agent, and its
   * `job_*` tools answer only that agent and its ancestors (`FOREIGN_JOB` for anyone else). Without it
   * the job belongs to no agent: top-level agents share it, child runs cannot reach it.
   */
  agent?: string
}

/** The owner's side of a job: feed output, report the end. Calls after the job ended are ignored. */
export interface JobHandle {
  readonly id: string
  /** Aborted when the job is asked to stop (for owners that prefer a signal to a `kill` function). */
  readonly signal: AbortSignal
  /** Appends output; bytes are decoded as UTF-8 per stream (split characters are joined). */
  write(chunk: string | Uint8Array, stream?: 'stdout' | 'stderr'): void
  /** The work ended: state `exited`, or `killed` when a stop was requested. */
  exit(result?: JobExit): void
  /** The work could not run or crashed: state `failed` (or `killed` when a stop was requested). */
  fail(error: unknown): void
}

/** A span of a job's output addressed by absolute character offsets. */
export interface JobRead {
  /** The absolute offset of `text` (later than asked when the characters before it were dropped). */
  offset: number
  text: string
  /** Characters skipped because they were no longer kept. */
  dropped: number
  nextOffset: number
  /** More output is already available after `nextOffset`. */
  more: boolean
  job: JobSnapshot
}

/**
 * The `jobs` service (`ctx.jobs`): background work started by tools (bash, terminals, subagents).
 * Owners `start` a job — it becomes an effect of the caller's fiber — feed it output and report its end.
 */
export interface JobsService {
  /** Starts a job owned by the calling plugin: unloading the caller kills it. */
  start(options: JobStartOptions): JobHandle
  /** The public snapshot of a job, or undefined when unknown. */
  get(id: string): JobSnapshot | undefined
  /** Snapshots of every known job, oldest first. */
  list(): JobSnapshot[]
  /** Reads up to `max` characters from absolute `offset`; throws `UNKNOWN_JOB` / `INVALID_OFFSET`. */
  read(id: string, offset?: number, max?: number): JobRead
  /** Resolves once output exists past `offset`, the job ended, `ms` passed or `signal` aborted. */
  wait(id: string, offset: number, ms: number, signal?: AbortSignal): Promise<void>
  /** Stops a running job and resolves once its owner reported the end; false if it had already ended. */
  kill(id: string, reason?: string): Promise<boolean>
}
