import type { RunQueue } from '@cordage/queue'
import { ServerError, type PendingRequest, type RunLauncher, type RunRequest } from '@cordage/server'
import type { SessionStore } from '@cordage/services'
import { enqueueRun, newRunId } from './enqueue.js'

/** What a queue launcher sends with every run. */
export interface QueueLauncherOptions {
  store: SessionStore
  queue: RunQueue
  /** Recorded in each session header (the server's directory). */
  cwd: string
  /** The text of the server's cordage.yml, which the runs use (absent: each worker's own). */
  config?: string
  /** Options of runs that name none. */
  defaults?: { maxTurns?: number; system?: string }
}

/**
 * `cordage serve` with `queue:` in cordage.yml: `POST /api/runs` enqueues the run for `cordage worker`s,
 * cancel goes through Redis to the worker holding the run, and the SSE of a run is its stored events (the
 * workers write them to the shared PostgreSQL store). Runs outlive the server: closing it cancels nothing.
 */
export class QueueRunLauncher implements RunLauncher {
  constructor(private readonly options: QueueLauncherOptions) {}

  async start(request: RunRequest): Promise<{ id: string }> {
    const { store, queue, cwd, config, defaults } = this.options
    const id = newRunId()
    const options = { ...defaults, ...request.options }
    await enqueueRun(
      store,
      queue,
      {
        id,
        prompt: request.prompt,
        ...(Object.keys(options).length && { options }),
        ...(config !== undefined && { config }),
        ...(request.cassette !== undefined && { cassette: request.cassette }),
      },
      cwd,
    )
    return { id }
  }

  async cancel(id: string): Promise<void> {
    await this.live(id)
    await this.options.queue.cancel(id)
  }

  async pending(id: string): Promise<PendingRequest[]> {
    await this.live(id)
    // Approvals and questions are not routed across workers: a queued run never waits on one.
    return []
  }

  async answer(id: string, requestId: unknown): Promise<void> {
    await this.live(id)
    throw new ServerError('REQUEST_NOT_FOUND', `run ${id} has no pending request ${JSON.stringify(requestId)}`)
  }

  status(): { pending: number } | undefined {
    return undefined
  }

  subscribe(): undefined {
    return undefined
  }

  async close(): Promise<void> {
    await this.options.queue.close()
  }

  /** Rejects with `RUN_NOT_FOUND` unless run `id` is queued or running. */
  private async live(id: string): Promise<void> {
    const state = await this.options.queue.state(id).catch(() => 'unknown' as const)
    if (state !== 'waiting' && state !== 'active' && state !== 'delayed') throw new ServerError('RUN_NOT_FOUND', `no queued or running run ${id}`)
  }
}
