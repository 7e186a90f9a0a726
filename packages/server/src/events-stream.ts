import type { Context as HonoContext } from 'hono'
import { streamSSE, type SSEStreamingApi } from 'hono/streaming'
import type { SessionStore } from '@cordage/services'
import type { RunLauncher } from './launcher.js'
import type { LiveMessage } from './pending.js'

/** How often an idle stream sends a `: keep-alive` comment, so proxies and browsers keep it open. */
export const KEEP_ALIVE_MS = 15_000

/**
 * `GET /api/sessions/:id/events`: the stored events after `after` (`id: <seq>`, `event: stored`), then
 * each new one as it is stored, with the live run's messages (`delta`, `pending`, `resolved`, no id) in
 * between; after `session/end`, `event: end` and the stream closes. Writes are serialised, so a live
 * message never lands inside a stored event.
 */
export function eventStream(c: HonoContext, options: { store: SessionStore; launcher: RunLauncher; id: string; after: number; onClose: () => void }) {
  const { store, launcher, id, after } = options
  return streamSSE(c, async (stream) => {
    const controller = new AbortController()
    stream.onAbort(() => controller.abort())
    let chain: Promise<void> = Promise.resolve()
    const send = (write: (stream: SSEStreamingApi) => Promise<void>) => {
      chain = chain.then(() => (stream.closed || stream.aborted ? undefined : write(stream))).catch(() => controller.abort())
      return chain
    }
    const live = (message: LiveMessage) => {
      if (message.type === 'delta') void send((out) => out.writeSSE({ event: 'delta', data: JSON.stringify({ text: message.text }) }))
      else if (message.type === 'pending') void send((out) => out.writeSSE({ event: 'pending', data: JSON.stringify(message.request) }))
      else void send((out) => out.writeSSE({ event: 'resolved', data: JSON.stringify({ requestId: message.requestId }) }))
    }
    const unsubscribe = launcher.subscribe(id, live)
    const keepAlive = setInterval(() => void send(async (out) => void (await out.write(': keep-alive\n\n'))), KEEP_ALIVE_MS)
    try {
      // A client that connects while a request waits learns of it now, not only when the next one comes.
      if (unsubscribe) for (const request of await launcher.pending(id).catch(() => [])) live({ type: 'pending', request })
      for await (const event of store.follow(id, { after, signal: controller.signal })) {
        await send((out) => out.writeSSE({ id: String(event.seq), event: 'stored', data: JSON.stringify(event) }))
        if (event.type === 'session/end') {
          await send((out) => out.writeSSE({ event: 'end', data: '{}' }))
          break
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        const code = (error as { code?: string })?.code ?? 'STREAM_FAILED'
        await send((out) => out.writeSSE({ event: 'error', data: JSON.stringify({ error: { code, message: (error as Error)?.message ?? String(error) } }) }))
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
