import type { StoredEvent } from './sessions.js'

/** How a store lets `followEvents` read and wait. */
export interface FollowSource {
  /** Events with `seq > after`, in order; throws `SESSION_NOT_FOUND` for an unknown session. */
  readAfter(after: number): Promise<StoredEvent[]>
  /** Calls `wake` when this store may have new events for the session; returns the unsubscribe. */
  subscribe(wake: () => void): () => void
  /** Re-reads at least this often even without a wake (writers in other processes). */
  pollMs: number
}

/**
 * The `follow` loop every store shares: yields what is stored after `after`, then waits for a wake or
 * the poll interval and reads again, until `session/end` has been yielded or `signal` aborts. Subscribing
 * before each read means an append between the read and the wait still wakes it.
 */
export async function* followEvents(source: FollowSource, after = 0, signal?: AbortSignal): AsyncGenerator<StoredEvent> {
  let last = after
  for (;;) {
    if (signal?.aborted) return
    let woken = false
    let wake: () => void = () => {
      woken = true
    }
    const unsubscribe = source.subscribe(() => wake())
    try {
      const events = await source.readAfter(last)
      for (const event of events) {
        if (event.seq <= last) continue
        last = event.seq
        yield event
        if (event.type === 'session/end') return
      }
      if (woken || signal?.aborted) continue
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, source.pollMs)
        signal?.addEventListener('abort', done, { once: true })
        wake = done
        function done(): void {
          clearTimeout(timer)
          signal?.removeEventListener('abort', done)
          resolve()
        }
      })
    } finally {
      unsubscribe()
    }
  }
}
