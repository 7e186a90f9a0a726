/**
 * Runs a check of search results while the search is still streaming them, a batch at a time, instead
 * of after it: ripgrep spends much of a search waiting on the disk and the scheduler, and the checks
 * (`recheck.ts`) fill that time. A failed check (a denial) rejects `kept`.
 */
export class PipelinedCheck<T> {
  private readonly checks: Array<Promise<T[]>> = []
  private batch: T[] = []

  constructor(
    private readonly check: (items: T[]) => Promise<T[]>,
    private readonly batchSize: number,
  ) {}

  /** Queues found items; a full batch starts its check at once. */
  add(items: readonly T[]): void {
    for (const item of items) this.batch.push(item)
    if (this.batch.length >= this.batchSize) this.flush()
  }

  /** Every item added that passed its check. */
  async kept(): Promise<Set<T>> {
    this.flush()
    return new Set((await Promise.all(this.checks)).flat())
  }

  private flush(): void {
    if (this.batch.length === 0) return
    const pending = this.check(this.batch)
    // Observed here so a failure never goes unhandled before `kept` awaits it.
    pending.catch(() => {})
    this.checks.push(pending)
    this.batch = []
  }
}
