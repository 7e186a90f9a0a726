import { ToolAbortedError, type JsonValue, errorMessage } from '@cordage/core'
import type { CodeRunResult } from '@cordage/services'
import { limitDetail, Watchdog, type SandboxLimits } from './budget.js'
import { CodeRunError } from './errors.js'
import { readLogs, resetLogs } from './output.js'
import type { SandboxPool, SandboxWorker } from './pool.js'
import { boundOutcome, encodeCompletion, parseArgs, parseCalls, type CallOutcome, type RunFailure, type WorkerMessage } from './protocol.js'
import type { CallScheduler } from './scheduler.js'

/** What a completed program produced. */
export type ProgramOutput = CodeRunResult

export interface RunOptions {
  code: string
  limits: SandboxLimits
  /** Tool names bound on `tools` inside the program. */
  toolNames: readonly string[]
  /** Host function paths bound as globals (`agents.run`); their calls reach the scheduler as `:<path>`. */
  hostNames: readonly string[]
  scheduler: CallScheduler
  /** Aborting ends the run (the caller cancelled); `runProgram` then rejects with `ToolAbortedError`. */
  signal?: AbortSignal
}

const NEVER_SETTLES = 'the program is waiting for a promise that can never settle (only tools.* calls are asynchronous here: there are no timers or I/O)'

/**
 * Runs `code` on a pooled worker: the body of an async function in a fresh QuickJS context. Resolves
 * with the logs and JSON result, or rejects with `CodeRunError` (or `ToolAbortedError` when `signal`
 * aborts or the pool shuts down). Outstanding calls are aborted and drained before it settles.
 */
export async function runProgram(pool: SandboxPool, options: RunOptions): Promise<ProgramOutput> {
  const { signal } = options
  let worker: SandboxWorker
  try {
    if (signal?.aborted) throw cancelled()
    const acquiring = pool.acquire()
    worker = await (signal ? raceAbort(acquiring, signal, (late) => pool.release(late, 0)) : acquiring)
  } catch (error) {
    await options.scheduler.close()
    if (error instanceof ToolAbortedError || pool.disposed) throw cancelled()
    throw new CodeRunError('aborted', `the sandbox could not start: ${errorMessage(error)}`, [])
  }
  return new Promise((resolve, reject) => new ProgramRun(pool, worker, options, resolve, reject).start())
}

/** The host side of one run on one worker. */
class ProgramRun {
  /** The worker is executing the program (it has not answered the last `run` or `settle` yet). */
  private busy = true
  private settled = false
  private cancelled = false
  private failure: RunFailure | undefined
  private readonly completions: string[] = []
  private flushQueued = false
  private calls = 0
  /** When the worker's last `wait` arrived: the `took` of the answer. */
  private waitedSince = 0
  private watchdog: Watchdog | undefined
  private readonly onAbort = () => {
    this.cancelled = true
    this.stop('aborted', 'cancelled')
  }

  constructor(
    private readonly pool: SandboxPool,
    private readonly worker: SandboxWorker,
    private readonly options: RunOptions,
    private readonly resolve: (output: ProgramOutput) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  start(): void {
    const { worker, options } = this
    resetLogs(worker.logs)
    worker.meter.fill(0)
    worker.holder = {
      message: (message) => this.onMessage(message),
      exit: (error) => {
        if (this.settled) return
        if (this.pool.disposed) this.cancelled = true
        const outOfMemory = (error as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
        this.failure ??= outOfMemory
          ? { kind: 'memory', detail: "the sandbox worker ran out of memory handling the program's data" }
          : { kind: 'aborted', detail: `the sandbox worker stopped unexpectedly${error ? ` (${error.message})` : ''}` }
        this.finish()
      },
    }
    worker.post({ type: 'run', code: options.code, tools: JSON.stringify(options.toolNames), hostFunctions: JSON.stringify(options.hostNames) })
    this.watchdog = new Watchdog(worker.meter, options.limits, (kind) => this.stop(kind))
    options.signal?.addEventListener('abort', this.onAbort, { once: true })
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'ended') return this.pool.release(this.worker, message.heapBytes)
    if (message.type === 'wait') {
      this.waitedSince = performance.now()
      this.busy = false
      if (!this.settled) this.submit(message.calls)
      return
    }
    if (message.type !== 'done') return
    this.busy = false
    // When the host had already ended this run, its `end` is answered by `ended` after this.
    if (this.settled) return
    if (message.failure)
      this.failure ??= { kind: message.failure.kind, detail: message.failure.detail || limitDetail(message.failure.kind, this.options.limits) }
    const result = message.result === undefined ? undefined : (JSON.parse(message.result) as JsonValue)
    this.finish(result)
    if (message.reusable) this.pool.release(this.worker, message.heapBytes)
  }

  // Hands the calls the program queued to the scheduler; answers at once when some already completed.
  private submit(batch: string): void {
    const { scheduler, limits } = this.options
    for (const call of parseCalls(batch)) {
      if (++this.calls > limits.maxCalls) return this.stop('calls')
      const parsed = parseArgs(call)
      if ('failed' in parsed) this.complete(call.id, parsed.failed)
      else scheduler.submit(call.wire, parsed.args, (outcome) => this.complete(call.id, outcome))
    }
    scheduler.pump()
    if (this.completions.length) this.flush()
    else if (scheduler.outstanding === 0) this.stop('runtime', NEVER_SETTLES)
  }

  private complete(id: string, outcome: CallOutcome): void {
    if (this.settled) return
    this.completions.push(encodeCompletion(id, boundOutcome(outcome, this.options.limits.memoryBytes)))
    if (this.busy || this.flushQueued) return
    // Completions of one tick (Promise.all of quick tools) travel together.
    this.flushQueued = true
    queueMicrotask(() => {
      this.flushQueued = false
      if (!this.busy && !this.settled && this.completions.length) this.flush()
    })
  }

  private flush(): void {
    this.busy = true
    this.worker.post({ type: 'settle', completions: this.completions.splice(0), took: Math.round((performance.now() - this.waitedSince) * 1000) })
    // A reply within the spin window is handled at once (pool.ts, channel.js). Only after completions:
    // after a `run` the worker first wakes from its idle sleep, which takes longer than the host's
    // window; spinning for it measurably slowed cold starts.
    this.worker.takeReply()
  }

  /**
   * The host ends the run: an idle worker is told to drop it and stays warm; a busy one is terminated.
   * The run does not wait for the thread to wind down (a bulk memory copy inside WASM can take a while
   * to reach a termination check): the worker is already out of the pool, and nothing it does later
   * reaches the host.
   */
  private stop(kind: RunFailure['kind'], detail = limitDetail(kind, this.options.limits)): void {
    if (this.settled) return
    this.failure ??= { kind, detail }
    if (this.busy) void this.pool.discard(this.worker)
    else this.worker.post({ type: 'end' })
    this.finish()
  }

  private finish(result?: JsonValue): void {
    if (this.settled) return
    this.settled = true
    this.watchdog?.close()
    this.options.signal?.removeEventListener('abort', this.onAbort)
    // Read before the worker can be reused: the buffer belongs to whichever run holds the worker.
    const logs = readLogs(this.worker.logs)
    const { failure } = this
    void this.options.scheduler.close().then(() => {
      if (this.cancelled) this.reject(cancelled())
      else if (failure) this.reject(new CodeRunError(failure.kind, failure.detail, logs))
      else this.resolve(result === undefined ? { logs } : { logs, result })
    })
  }
}

function cancelled(): ToolAbortedError {
  return new ToolAbortedError('run_code was cancelled; its outstanding tool calls were aborted')
}

/** `promise`, or a cancellation when `signal` aborts first (a late value is handed to `late`). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, late: (value: T) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(cancelled())
      promise.then(late, () => {})
    }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => (signal.removeEventListener('abort', onAbort), signal.aborted ? undefined : resolve(value)),
      (error) => (signal.removeEventListener('abort', onAbort), reject(error)),
    )
  })
}
