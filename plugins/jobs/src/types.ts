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
  error: Schema.union([Schema.string(), Schema.const(null)]).required().description('Why a failed job failed.'),
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
