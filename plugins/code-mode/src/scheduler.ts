import type { JsonValue } from '@cordage/core'
import { thrownOutcome, type CallOutcome } from './protocol.js'

/** Runs one call to completion; must settle (the registry's `execute` never rejects). */
export type CallRunner = (name: string, args: JsonValue, signal: AbortSignal) => Promise<CallOutcome>

interface Queued {
  name: string
  args: JsonValue
  parallel: boolean
  done: (outcome: CallOutcome) => void
}

/**
 * Starts a program's tool calls in submission order: a parallel-safe call starts when no exclusive call
 * is running and nothing is queued ahead of it; an exclusive call starts only when nothing else runs.
 * `close()` aborts every running call, drops queued ones, and resolves when the running ones settled.
 */
export class CallScheduler {
  private readonly queue: Queued[] = []
  private readonly running = new Set<Promise<void>>()
  private exclusiveRunning = false
  private readonly controller = new AbortController()

  constructor(
    private readonly runner: CallRunner,
    private readonly isParallel: (name: string, args: JsonValue) => boolean,
  ) {}

  /** Calls submitted or running that have not settled yet. */
  get outstanding(): number {
    return this.queue.length + this.running.size
  }

  /** Queues a call; `done` receives its outcome. Nothing starts until `pump()`. */
  submit(name: string, args: JsonValue, done: (outcome: CallOutcome) => void): void {
    if (this.controller.signal.aborted) return done({ ok: false, message: 'the program run has ended', code: 'ABORTED_BEFORE_DISPATCH' })
    let parallel = false
    try {
      parallel = this.isParallel(name, args)
    } catch {
      parallel = false
    }
    this.queue.push({ name, args, parallel, done })
  }

  /** Starts every queued call the concurrency rules allow, in submission order. */
  pump(): void {
    while (this.queue.length && !this.controller.signal.aborted) {
      const head = this.queue[0]
      if (head.parallel ? this.exclusiveRunning : this.running.size > 0) return
      this.queue.shift()
      if (!head.parallel) this.exclusiveRunning = true
      const started = this.runner(head.name, head.args, this.controller.signal).then((outcome) => outcome, thrownOutcome)
      const tracked: Promise<void> = started.then((outcome) => {
        this.running.delete(tracked)
        if (!head.parallel) this.exclusiveRunning = false
        head.done(outcome)
        this.pump()
      })
      this.running.add(tracked)
    }
  }

  /** Aborts running calls, drops queued ones, and waits until every started call has settled. */
  async close(): Promise<void> {
    this.controller.abort()
    const dropped = this.queue.splice(0)
    for (const entry of dropped) entry.done({ ok: false, message: 'the program run ended before this call started', code: 'ABORTED_BEFORE_DISPATCH' })
    while (this.running.size) await Promise.allSettled(this.running)
  }
}
