/** A callback waiting on a signal; `cancel()` stops the wait (a no-op once it ran). */
export interface AbortWait {
  cancel(): void
}

/** The callbacks waiting on one signal, in a list: adding and cancelling are a few pointer writes, no hashing. */
interface Watched {
  head: Waiter | undefined
  tail: Waiter | undefined
  readonly listener: () => void
  readonly ref: WeakRef<AbortSignal>
  /** Set once the watch is closed: takes the listener off when the last wait ends. */
  drop?: () => void
}

/** One wait, appended to its signal's list; unlinked when cancelled or called. */
class Waiter implements AbortWait {
  prev: Waiter | undefined
  next: Waiter | undefined
  private list: Watched | undefined

  constructor(
    readonly callback: () => void,
    list: Watched,
  ) {
    this.list = list
    this.prev = list.tail
    if (list.tail) list.tail.next = this
    else list.head = this
    list.tail = this
  }

  cancel(): void {
    const list = this.list
    if (!list) return
    this.list = undefined
    if (this.prev) this.prev.next = this.next
    else list.head = this.next
    if (this.next) this.next.prev = this.prev
    else list.tail = this.prev
    if (!list.head) list.drop?.()
  }
}

const DONE: AbortWait = Object.freeze({ cancel() {} })

/** How Node reports a throwing event listener: as an uncaught exception, after the dispatch. */
function reportUncaught(error: unknown): void {
  process.nextTick(() => {
    throw error
  })
}

/**
 * Abort callbacks on shared listeners: one real `abort` listener per signal for this watch, however many
 * callbacks wait on that signal and however often they come and go. On Node 20, adding and removing an
 * AbortSignal listener costs a few hundred nanoseconds (more in a busy process); a wait here costs one
 * small object and a few pointer writes. And a signal many calls wait on at once is not a "possible
 * EventTarget memory leak".
 *
 * The listener stays on a signal until it aborts, until the signal is collected (the signal holds the
 * listener, not the other way round), or until the watch is closed and nothing waits on the signal. An
 * owner closes its watch when it unloads: a wait still in flight then (a call that has not settled)
 * keeps its callback, so an abort still reaches it, and its listener goes when the last wait ends.
 */
export class AbortWatch {
  private readonly watched = new WeakMap<AbortSignal, Watched>()
  /** Signals this watch listens on, held weakly, so `close` can find them. */
  private readonly attached = new Set<WeakRef<AbortSignal>>()
  private readonly collected = new FinalizationRegistry<WeakRef<AbortSignal>>((ref) => this.attached.delete(ref))
  private closed = false

  /** `report` gets what a callback throws (the others still run); by default it is thrown as Node throws a listener's error. */
  constructor(private readonly report: (error: unknown) => void = reportUncaught) {}

  /** Calls `callback` once when `signal` aborts (at once, synchronously, if it has), unless cancelled first. */
  add(signal: AbortSignal, callback: () => void): AbortWait {
    if (signal.aborted) {
      callback()
      return DONE
    }
    let list = this.watched.get(signal)
    if (!list) {
      const ref = new WeakRef(signal)
      const fresh: Watched = { head: undefined, tail: undefined, listener: () => this.fire(signal, fresh), ref }
      if (this.closed) fresh.drop = () => this.forget(signal, fresh)
      list = fresh
      this.watched.set(signal, fresh)
      this.attached.add(ref)
      this.collected.register(signal, ref, ref)
      signal.addEventListener('abort', fresh.listener, { once: true })
    }
    return new Waiter(callback, list)
  }

  /**
   * Takes this watch's listeners off: at once from a signal nothing waits on, from the others when their
   * last wait ends (callbacks still waiting are called if their signal aborts first). Waits added after
   * it work the same way, so nothing of a closed watch outlasts the waits on it.
   */
  close(): void {
    this.closed = true
    for (const ref of this.attached) {
      const signal = ref.deref()
      const list = signal && this.watched.get(signal)
      if (!list) {
        this.attached.delete(ref)
        continue
      }
      if (list.head) list.drop = () => this.forget(signal, list)
      else this.forget(signal, list)
    }
  }

  /** How many signals this watch listens on (one listener each). Reading it keeps them alive to the end of the current task. */
  get size(): number {
    let count = 0
    for (const ref of this.attached) if (ref.deref()) count++
    return count
  }

  private fire(signal: AbortSignal, list: Watched): void {
    this.forget(signal, list)
    list.drop = undefined
    // In order; a callback may cancel a later one. Each runs even if one before it throws.
    for (let waiter = list.head; waiter; waiter = list.head) {
      waiter.cancel()
      try {
        waiter.callback()
      } catch (error) {
        this.report(error)
      }
    }
  }

  private forget(signal: AbortSignal, list: Watched): void {
    signal.removeEventListener('abort', list.listener)
    this.watched.delete(signal)
    this.attached.delete(list.ref)
    this.collected.unregister(list.ref)
  }
}
