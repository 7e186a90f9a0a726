/**
 * Admits at most `limit` tasks at once and queues the rest in order; a queued task whose signal aborts
 * leaves the queue without running.
 */
export class Limiter {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.active >= this.limit) {
      await new Promise<void>((resolve, reject) => {
        const admit = () => {
          signal.removeEventListener('abort', cancel)
          resolve()
        }
        const cancel = () => {
          const at = this.waiting.indexOf(admit)
          if (at >= 0) this.waiting.splice(at, 1)
          reject(signal.reason)
        }
        if (signal.aborted) return reject(signal.reason)
        signal.addEventListener('abort', cancel, { once: true })
        this.waiting.push(admit)
      })
    }
    this.active++
    try {
      return await task()
    } finally {
      this.active--
      this.waiting.shift()?.()
    }
  }
}
