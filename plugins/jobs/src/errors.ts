import { CordageError } from '@cordage/core'

/** No job with that id is known (never existed, or evicted after finishing). */
export class UnknownJobError extends CordageError {
  constructor(
    readonly jobId: string,
    known: string[],
  ) {
    const list = known.length ? known.join(', ') : '(none)'
    super('UNKNOWN_JOB', `no job "${jobId}"; known jobs: ${list}. Finished jobs are kept only up to the configured limit.`)
  }
}

/** A read offset lies past the end of a job's output. */
export class JobOffsetError extends CordageError {
  constructor(
    readonly jobId: string,
    offset: number,
    end: number,
  ) {
    super(
      'INVALID_OFFSET',
      `offset ${offset} is past the end of ${jobId}'s output (${end} characters so far); use an offset from 0 to ${end}, e.g. the nextOffset of your last read`,
    )
  }
}

/** The job was started by an agent the caller is not (nor an ancestor of): another agent's work. */
export class ForeignJobError extends CordageError {
  constructor(readonly jobId: string) {
    super(
      'FOREIGN_JOB',
      `job "${jobId}" belongs to another agent; you can read and stop only the jobs you (or the subagents you started) started: see job_list`,
    )
  }
}
