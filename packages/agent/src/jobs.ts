import type { Context } from 'cordis'

/** A background job's completion, turned into a context message before the agent's next model request. */
export interface JobNotice {
  source: string
  text: string
}

/**
 * Listens for `jobs/completed` (emitted by a `jobs` service, if one is loaded) while a run is active.
 * The payload is read loosely — `{ text?, summary?, id?, jobId?, agent? }` — because the jobs plugin
 * owns that event; a notice addressed to another agent (`agent` set and different) is skipped.
 */
export function watchJobs(ctx: Context, agent: string | undefined, onNotice: (notice: JobNotice) => void): () => void {
  return (ctx as any).on('jobs/completed', (payload: unknown) => {
    const notice = (payload && typeof payload === 'object' ? payload : {}) as Record<string, unknown>
    if (typeof notice.agent === 'string' && notice.agent !== agent) return
    const id = notice.jobId ?? notice.id
    const text = typeof notice.text === 'string' ? notice.text : typeof notice.summary === 'string' ? notice.summary : undefined
    onNotice({ source: 'jobs', text: text ?? `job ${id === undefined ? '(unknown)' : String(id)} completed: ${JSON.stringify(payload)}` })
  })
}
