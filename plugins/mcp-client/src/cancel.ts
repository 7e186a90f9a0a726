/**
 * The part of `AbortSignal` the SDK's `Protocol.request` uses: `aborted`, `reason`, `throwIfAborted()` and
 * `abort` listeners, which it never removes. One per call, so those listeners die with the call. A real
 * `AbortController` would do, but creating its signal costs more on Node 20 than the rest of the bridge (see the benchmark).
 */
export class RequestSignal {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> = []

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(type: string, listener: () => void): void {
    if (type === 'abort') this.listeners.push(listener)
  }

  /** Marks the call aborted and runs its listeners once (the SDK's sends notifications/cancelled). */
  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = []
    for (const listener of listeners) listener()
  }
}
