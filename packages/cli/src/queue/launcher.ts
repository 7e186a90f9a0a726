import type { RunQueue } from '@cordage/queue'
import { ServerError, type LiveMessage, type PendingRequest, type RunLauncher, type RunRequest } from '@cordage/server'
import type { SessionStore } from '@cordage/services'
import { CordageError } from '@cordage/core'
import { enqueueRun, newRunId } from './enqueue.js'
import { answerWaiting, cancelWaiting, waitState } from './waiting.js'

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
 * workers write them to the shared PostgreSQL store). A run waiting for its user is stored as waiting: its
 * request is read from its session, an answer is stored there and enqueues the run again, and a cancel
 * ends it in the store. Runs outlive the server: closing it cancels nothing.
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
    const { store, queue } = this.options
    // A run waiting for its user holds no worker: its session ends here.
    if (await cancelWaiting(store, queue, id).catch(notStored)) return
    await this.live(id)
    await queue.cancel(id)
  }

  async pending(id: string): Promise<PendingRequest[]> {
    const state = waitState((await this.options.store.read(id).catch(notStored))?.events ?? [])
    if (state.kind === 'waiting') return [state.request]
    await this.live(id)
    return []
  }

  async answer(id: string, requestId: unknown, answer: unknown): Promise<void> {
    const { store, queue } = this.options
    if (await answerWaiting(store, queue, id, requestId, answer).catch(notStored)) return
    await this.live(id)
    throw new ServerError('REQUEST_NOT_FOUND', `run ${id} has no pending request ${JSON.stringify(requestId)}`)
  }

  status(): { pending: number } | undefined {
    // The session list reads a waiting run's status from the store.
    return undefined
  }

  /** The run's streamed text, from the worker running it (over Redis); requests come from the stored session. */
  subscribe(id: string, listener: (message: LiveMessage) => void): () => void {
    return this.options.queue.followText(id, (text) => listener({ type: 'delta', text }))
  }

  /** A waiting run's request is a stored `session/waiting` event, not a live message. */
  readonly storedRequests = true

  async close(): Promise<void> {
    await this.options.queue.close()
  }

  /** Rejects with `RUN_NOT_FOUND` unless run `id` is queued or running (its first job, or a resumed one, is). */
  private async live(id: string): Promise<void> {
    const { store, queue } = this.options
    const state = await queue.state(id).catch(() => 'unknown' as const)
    if (state === 'waiting' || state === 'active' || state === 'delayed') return
    // A run resumed after an answer runs as a job of its own; its session says whether it goes on.
    const summary = await store.read(id).catch(() => undefined)
    if (summary && summary.events.some((event) => event.type === 'session/waiting') && summary.events.at(-1)?.type !== 'session/end') return
    throw new ServerError('RUN_NOT_FOUND', `no queued or running run ${id}`)
  }
}

/** An unknown session is the API's 404 (`RUN_NOT_FOUND` lets it say whether the session exists). */
function notStored(error: unknown): never {
  if (CordageError.is(error) && error.code === 'SESSION_NOT_FOUND') throw new ServerError('RUN_NOT_FOUND', error.message)
  throw error
}
