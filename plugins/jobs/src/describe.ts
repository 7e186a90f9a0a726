import type { HookContext } from '@cordage/core'
import type { JobSnapshot } from '@cordage/services'

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** The outcome part of a job line: `running`, `exited with code 0`, `killed (SIGTERM)`, `failed: …`. */
export function describeState(job: JobSnapshot): string {
  switch (job.state) {
    case 'running':
      return 'running'
    case 'exited':
      return job.signal ? `ended by signal ${job.signal}` : `exited with code ${job.exitCode ?? 'unknown'}`
    case 'killed':
      return job.signal ? `killed (${job.signal})` : 'killed'
    case 'failed':
      return `failed: ${job.error ?? 'unknown error'}`
  }
}

/** One line per job: `job_1 [bash] running for 3.2 s, 120 chars: npm test`. */
export function describeJob(job: JobSnapshot): string {
  const time = job.state === 'running' ? `for ${seconds(job.durationMs)}` : `after ${seconds(job.durationMs)}`
  const dropped = job.droppedChars ? ` (${job.droppedChars} dropped)` : ''
  return `${job.id} [${job.kind}] ${describeState(job)} ${time}, ${job.outputChars} chars of output${dropped}: ${job.title}`
}

/**
 * The context an agent loop can add after a `jobs/completed` event, e.g.
 * `ctx.on('jobs/completed', (job) => queue.push(completionContext(job)))`.
 */
export function completionContext(job: JobSnapshot): HookContext {
  return {
    source: 'jobs',
    text: `Background job ${job.id} (${job.kind}: ${job.title}) ${describeState(job)} after ${seconds(job.durationMs)} with ${job.outputChars} chars of output. Read it with job_output { "job_id": "${job.id}" }.`,
  }
}
