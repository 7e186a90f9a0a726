import type { Context } from 'cordis'

/** A background job's completion, turned into a context message before the agent's next model request. */
export interface JobNotice {
  source: string
  text: string
}

function outcome(job: Record<string, unknown>): string {
  if (job.state === 'failed') return `failed: ${String(job.error ?? 'unknown error')}`
  if (job.state === 'killed') return job.signal ? `was killed (${String(job.signal)})` : 'was killed'
  if (job.signal) return `ended by signal ${String(job.signal)}`
  return `exited with code ${job.exitCode ?? 'unknown'}`
}

/**
 * Listens for `jobs/completed` (emitted by the jobs plugin with the job's public snapshot
 * `{ id, kind, title, state, exitCode, signal, error, durationMs, outputChars, … }`) while a run is
 * active, and queues one notice per completion. The payload is read loosely: the jobs plugin owns it.
 */
export function watchJobs(ctx: Context, onNotice: (notice: JobNotice) => void): () => void {
  return (ctx as any).on('jobs/completed', (payload: unknown) => {
    const job = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>
    const id = String(job.id ?? '(unknown)')
    const what = job.kind !== undefined ? ` (${String(job.kind)}: ${String(job.title ?? '')})` : ''
    const size = typeof job.outputChars === 'number' ? ` with ${job.outputChars} chars of output` : ''
    onNotice({ source: 'jobs', text: `Background job ${id}${what} ${outcome(job)}${size}. Read it with job_output { "job_id": ${JSON.stringify(id)} }.` })
  })
}
