import { ToolAbortedError } from '@cordage/core'

/**
 * The runs of the plugin's tools in flight. Each runs under its caller's signal and the plugin's own, so
 * unloading the plugin (`close`) aborts every program, round and child, and waits for them to settle.
 */
export class Lifetime {
  private readonly controller = new AbortController()
  private readonly inFlight = new Set<Promise<unknown>>()

  /** Runs `body` under `signal` and the plugin's lifetime; a run the unload cut short fails `ABORTED`, whatever it returned. */
  async run<T>(signal: AbortSignal, body: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const own = this.controller.signal
    if (own.aborted) throw own.reason
    const running = body(AbortSignal.any([signal, own]))
    this.inFlight.add(running)
    try {
      const result = await running
      if (own.aborted) throw own.reason
      return result
    } catch (error) {
      throw own.aborted ? own.reason : error
    } finally {
      this.inFlight.delete(running)
    }
  }

  /** Aborts every run in flight and resolves once all have settled. */
  async close(): Promise<void> {
    this.controller.abort(new ToolAbortedError('the workflow plugin was unloaded, so the run was stopped'))
    await Promise.allSettled(this.inFlight)
  }
}
