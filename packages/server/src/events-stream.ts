import type { ServerResponse } from 'node:http'
import type { Context as HonoContext } from 'hono'
import { streamSSE, type SSEStreamingApi } from 'hono/streaming'
import type { SessionStore, StoredEvent } from '@cordage/services'
import type { RunLauncher } from './launcher.js'
import type { LiveMessage, PendingRequest } from './pending.js'
import { errorMessage } from '@cordage/core'

/** How often an idle stream sends a `: keep-alive` comment, so proxies and browsers keep it open. */
export const KEEP_ALIVE_MS = 15_000

/**
 * Live messages (deltas, pending, resolved) one stream may hold for a client that does not read, in
 * characters, before that client is disconnected (default of `maxLiveBacklog`). A turn's whole text is
 * far below it, so a burst alone never reaches it; a client that stopped reading does.
 */
export const MAX_LIVE_BACKLOG = 1 << 20

/**
 * `GET /api/sessions/:id/events`: the stored events after `after` (`id: <seq>`, `event: stored`), then
 * each new one as it is stored, with the live run's messages (`delta`, `pending`, `resolved`, no id) in
 * between; after `session/end`, `event: end` and the stream closes (at once when `ended`: the client
 * resumed after the session's `session/end`). Writes are serialised, so a live
 * message never lands inside a stored event.
 *
 * Memory per client is bounded: stored events are read from the store only as the client takes them;
 * deltas queued behind a slow client are merged into one (the last queued message, so order is kept);
 * and a client more than `maxLiveBacklog` characters of live messages behind is disconnected. It
 * reconnects with `Last-Event-ID` and loses nothing stored; the turn's text so far comes as one delta.
 */
export function eventStream(
  c: HonoContext,
  options: { store: SessionStore; launcher: RunLauncher; id: string; after: number; ended?: boolean; maxLiveBacklog?: number; onClose: () => void },
) {
  const { store, launcher, id, after } = options
  const maxBacklog = options.maxLiveBacklog ?? MAX_LIVE_BACKLOG
  return streamSSE(c, async (stream) => {
    const controller = new AbortController()
    stream.onAbort(() => controller.abort())
    let chain: Promise<unknown> = Promise.resolve()
    /** Writes queued and not yet finished. */
    let queued = 0
    /** Characters of live messages queued and not yet started. */
    let backlog = 0
    /** The delta queued last, while it is still the last thing queued and not yet written: later text joins it. */
    let openDelta: { text: string } | undefined
    const written = () => void queued--
    const failed = () => {
      queued--
      controller.abort()
    }
    const send = (write: (stream: SSEStreamingApi) => Promise<unknown>) => {
      openDelta = undefined
      queued++
      chain = chain.then(() => (stream.closed || stream.aborted ? undefined : write(stream))).then(written, failed)
      return chain
    }
    const sendLive = (size: number, write: (stream: SSEStreamingApi) => Promise<unknown>) => {
      backlog += size
      if (backlog > maxBacklog) return overflow()
      return send(write)
    }
    const overflow = () => {
      if (controller.signal.aborted) return
      controller.abort()
      stream.abort()
      // The socket itself, with whatever the kernel still holds for this client.
      ;(c.env as { outgoing?: ServerResponse } | undefined)?.outgoing?.destroy()
    }
    const live = (message: LiveMessage) => {
      if (controller.signal.aborted) return
      if (message.type === 'delta') {
        if (openDelta) {
          openDelta.text += message.text
          backlog += message.text.length
          if (backlog > maxBacklog) overflow()
          return
        }
        const delta = { text: message.text }
        void sendLive(delta.text.length, (out) => {
          if (openDelta === delta) openDelta = undefined
          backlog -= delta.text.length
          return out.write(frame('delta', JSON.stringify(delta)))
        })
        openDelta = delta
        return
      }
      const data = message.type === 'pending' ? JSON.stringify(message.request) : JSON.stringify({ requestId: message.requestId })
      void sendLive(data.length, (out) => {
        backlog -= data.length
        return out.write(frame(message.type, data))
      })
    }
    const unsubscribe = launcher.subscribe(id, live)
    // Only an idle stream needs one: a stream with writes queued is not idle (and a stuck client must not pile them up).
    const keepAlive = setInterval(() => {
      if (!queued) void send(async (out) => void (await out.write(': keep-alive\n\n')))
    }, KEEP_ALIVE_MS)
    try {
      if (options.ended) {
        await send((out) => out.write(frame('end', '{}')))
        return
      }
      // A client that connects while a request waits learns of it now, not only when the next one comes.
      const announced = new Set<string>()
      for (const request of await launcher.pending(id).catch(() => [])) {
        announced.add(request.id)
        live({ type: 'pending', request })
      }
      let waiting: string | undefined
      for await (const event of store.follow(id, { after, signal: controller.signal })) {
        await send((out) => out.write(frame('stored', JSON.stringify(event), event.seq)))
        // A run stored as waiting (a queued run, holding no worker) asks through its session: its request is a
        // `pending` message as a live run's is, and the answer (or the end) resolves it.
        const request = (launcher.storedRequests ?? !unsubscribe) ? storedRequest(event) : undefined
        if (request) {
          waiting = request.id
          if (!announced.has(request.id)) live({ type: 'pending', request })
        } else if (waiting !== undefined && (event.type === 'session/answer' || event.type === 'session/end')) {
          live({ type: 'resolved', requestId: waiting })
          waiting = undefined
        }
        if (event.type === 'session/end') {
          await send((out) => out.write(frame('end', '{}')))
          break
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        const code = (error as { code?: string })?.code ?? 'STREAM_FAILED'
        await send((out) => out.write(frame('error', JSON.stringify({ error: { code, message: errorMessage(error) } }))))
      }
    } finally {
      clearInterval(keepAlive)
      unsubscribe?.()
      controller.abort()
      await chain
      options.onClose()
    }
  })
}

/** The request a stored `session/waiting` event carries (a queued run waiting for its user). */
export function storedRequest(event: StoredEvent): PendingRequest | undefined {
  if (event.type !== 'session/waiting') return undefined
  const request = (event.data as { request?: PendingRequest }).request
  return request && typeof request.id === 'string' ? request : undefined
}

/**
 * One SSE message as `writeSSE` frames it (`event`, `data`, then `id`), written as one string: the data
 * here is always JSON from `JSON.stringify`, which has no line breaks, so it is one `data:` line.
 */
function frame(event: string, data: string, id?: number): string {
  return id === undefined ? `event: ${event}\ndata: ${data}\n\n` : `event: ${event}\ndata: ${data}\nid: ${id}\n\n`
}
