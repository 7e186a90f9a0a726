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
 * The notice for a `jobs/completed` payload (the jobs plugin's public job snapshot
 * `{ id, kind, title, state, exitCode, signal, error, outputChars, … }`), read loosely: that plugin owns it.
 */
export function jobNotice(payload: unknown): JobNotice {
  const job = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>
  const id = String(job.id ?? '(unknown)')
  const what = job.kind !== undefined ? ` (${String(job.kind)}: ${String(job.title ?? '')})` : ''
  const size = typeof job.outputChars === 'number' ? ` with ${job.outputChars} chars of output` : ''
  return { source: 'jobs', text: `Background job ${id}${what} ${outcome(job)}${size}. Read it with job_output { "job_id": ${JSON.stringify(id)} }.` }
}
