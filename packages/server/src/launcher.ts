import type { LiveMessage, PendingRequest } from './pending.js'

/** What `POST /api/runs` asks for (the body, checked). */
export interface RunRequest {
  prompt: string
  options?: { maxTurns?: number; system?: string }
  /** Absolute path of a recorded-model file inside the server's working directory (checked by the server). */
  cassette?: string
}

/**
 * Where runs are executed. The server starts, cancels and answers runs only through this interface, so
 * a launcher that hands runs to workers in other processes (a queue) plugs in without changing the API:
 * those workers write to the shared session store and the SSE of stored events works through `follow`.
 * A run's id is its session id. Methods that name a run reject with `RUN_NOT_FOUND` for one this
 * launcher does not know (or no longer runs), so the API answers 404.
 */
export interface RunLauncher {
  /** Starts a run; resolves once its session exists in the store (so it can be read and followed at once). */
  start(request: RunRequest): Promise<{ id: string }>
  /** Asks run `id` to stop; its session ends with reason `cancelled`. */
  cancel(id: string): Promise<void>
  /** The requests run `id` is waiting on (empty for a run that waits on nothing). */
  pending(id: string): Promise<PendingRequest[]>
  /** Answers a pending request (`REQUEST_NOT_FOUND`, `ALREADY_ANSWERED`, `INVALID_ANSWER`). */
  answer(id: string, requestId: unknown, answer: unknown): Promise<void>
  /** Whether run `id` is live here, and how many requests it waits on (`undefined`: not a live run). */
  status(id: string): { pending: number } | undefined
  /**
   * Live messages of run `id` (streamed text, requests, resolutions) until unsubscribed, starting with the
   * current turn's text so far as one `delta` when there is any; returns the
   * unsubscribe, or `undefined` when the run is not live here (a launcher without live messages may
   * always return `undefined`: clients then see stored events only).
   */
  subscribe(id: string, listener: (message: LiveMessage) => void): (() => void) | undefined
  /**
   * True when a run's requests are stored in its session (`session/waiting`, then `session/answer`) rather
   * than sent as live messages: the stream turns those events into `pending` and `resolved`. Default: true
   * for a run without live messages here, false for one with them.
   */
  readonly storedRequests?: boolean
  /** Cancels every run and waits until their sessions have ended. */
  close(): Promise<void>
}
