import type { JsonValue } from '@cordage/core'
import type { CodeHostFunction, CodeSession, CodeSessionOptions } from '@cordage/services'
import { limitDetail, Watchdog, type SandboxLimits } from './budget.js'
import { CodeSessionError } from './errors.js'
import { callHost, hostFunctions } from './host-functions.js'
import type { SandboxPool, SandboxWorker } from './pool.js'
import { boundOutcome, encodeCompletion, parseArgs, parseCalls, type CallOutcome, type HostMessage, type WorkerMessage } from './protocol.js'
import { CallScheduler } from './scheduler.js'
import { errorMessage } from '@cordage/core'

// Bounds on what one session may have in flight: evaluations the host started, and host function
// calls the code started. Past them a new one fails at once instead of queueing without end.
const MAX_EVALUATIONS = 256
const MAX_HOST_CALLS = 1024
// The wall-clock timer of a session's watchdog: steps are bounded by CPU, evaluations by their own timeouts.
const NO_WALL_LIMIT = 2 ** 31 - 1

interface Evaluation {
  resolve(value: JsonValue | undefined): void
  reject(error: Error): void
  timer: NodeJS.Timeout | undefined
}

/**
 * Opens a session on a pooled worker: a persistent context with `options.host` bound. It resolves once
 * a worker is held, without waiting for the worker's answer: messages to it queue in order, so the
 * first evaluations travel with the `open` (each wake of a sleeping worker costs a fraction of a
 * millisecond). Rejects with `CodeSessionError` (`aborted`) when no worker can start.
 */
export async function openSession(pool: SandboxPool, limits: SandboxLimits, options: CodeSessionOptions): Promise<CodeSession> {
  const host = hostFunctions(options.host ?? {})
  let worker: SandboxWorker
  try {
    worker = await pool.acquire()
  } catch (error) {
    throw new CodeSessionError('aborted', `the sandbox could not start: ${errorMessage(error)}`)
  }
  return new SandboxSession(pool, worker, { ...limits, cpuTimeMs: options.stepCpuMs ?? limits.cpuTimeMs }, host, options)
}

/**
 * The host side of one session. Every message it posts is answered by one `progress` (or by `done`,
 * when the session breached a limit); while answers are owed, a watchdog reads the worker's CPU meter
 * and terminates a worker stuck in one step past its budget (a loop that never polls, a job flood).
 */
class SandboxSession implements CodeSession {
  private readonly evaluations = new Map<number, Evaluation>()
  private sequence = 0
  /** Messages posted whose answer has not arrived: the worker has work while this is above 0. */
  private owed = 0
  private watchdog: Watchdog | undefined
  private failure: CodeSessionError | undefined
  private readonly completions: string[] = []
  private flushQueued = false
  private readonly scheduler: CallScheduler

  constructor(
    private readonly pool: SandboxPool,
    private readonly worker: SandboxWorker,
    private readonly limits: SandboxLimits,
    host: Map<string, CodeHostFunction>,
    private readonly options: CodeSessionOptions,
  ) {
    this.scheduler = new CallScheduler(
      (wire, args, signal) => {
        const fn = wire.startsWith(':') ? host.get(wire.slice(1)) : undefined
        return fn ? callHost(fn, args, signal) : Promise.resolve({ ok: false, message: `${wire} is not available in this sandbox`, code: 'UNKNOWN_TOOL' })
      },
      () => true,
    )
    worker.holder = {
      session: true,
      message: (message) => this.onMessage(message),
      exit: (error) => {
        const outOfMemory = (error as { code?: string } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
        this.end(
          outOfMemory
            ? new CodeSessionError('memory', "the sandbox worker ran out of memory handling the session's data")
            : new CodeSessionError('aborted', `the sandbox worker stopped${error ? ` (${error.message})` : ''}`),
        )
      },
    }
    this.send({
      type: 'open',
      hostFunctions: JSON.stringify([...host.keys()]),
      stepMs: limits.cpuTimeMs,
      ...(options.setup !== undefined && { setup: options.setup }),
    })
  }

  get ended(): boolean {
    return this.failure !== undefined
  }

  evaluate(code: string, options: { timeoutMs?: number; file?: string } = {}): Promise<JsonValue | undefined> {
    if (this.failure) return Promise.reject(this.failure)
    if (this.evaluations.size >= MAX_EVALUATIONS)
      return Promise.reject(new CodeSessionError('calls', `the session already runs ${MAX_EVALUATIONS} evaluations; wait for some to finish`))
    const id = ++this.sequence
    return new Promise((resolve, reject) => {
      const evaluation: Evaluation = { resolve, reject, timer: undefined }
      const { timeoutMs } = options
      if (timeoutMs !== undefined) {
        evaluation.timer = setTimeout(() => {
          if (!this.evaluations.delete(id)) return
          reject(new CodeSessionError('timeout', `the code did not finish within ${timeoutMs} ms`))
        }, timeoutMs)
      }
      this.evaluations.set(id, evaluation)
      this.send({ type: 'invoke', id, code, ...(options.file !== undefined && { file: options.file }) })
    })
  }

  async close(): Promise<void> {
    if (this.failure) return
    const busy = this.owed > 0
    this.end(new CodeSessionError('aborted', 'the session was closed'), true)
    // An idle worker drops the context and answers `ended` (the holder releases it then); a busy one is
    // stopped where it is, whatever it runs.
    if (busy) await this.pool.discard(this.worker)
    else this.worker.post({ type: 'end' }, true)
  }

  private send(message: HostMessage): void {
    this.worker.post(message, true)
    if (this.owed++ === 0) this.watchdog = new Watchdog(this.worker.meter, { ...this.limits, timeoutMs: NO_WALL_LIMIT }, () => this.stopBusy())
  }

  private stopBusy(): void {
    if (this.failure) return
    this.end(new CodeSessionError('cpu', this.limitDetail('cpu')))
    void this.pool.discard(this.worker)
  }

  /** The model-readable sentence for a limit the session breached. */
  private limitDetail(kind: CodeSessionError['kind'] | undefined): string {
    if (kind === 'cpu') return `a step of the session used more than ${this.limits.cpuTimeMs} ms of CPU time and the session was ended (an endless loop?)`
    if (kind === 'memory') return `the session exceeded the memory limit of ${this.limits.memoryBytes} bytes and was ended`
    return kind ? limitDetail(kind, this.limits) : 'the session ended'
  }

  private onMessage(message: WorkerMessage): void {
    if (message.type === 'ended') return this.pool.release(this.worker, message.heapBytes)
    if (message.type === 'done') {
      const failure = message.failure
      this.end(new CodeSessionError(failure?.kind ?? 'aborted', failure?.detail || this.limitDetail(failure?.kind)))
      if (message.reusable) this.pool.release(this.worker, message.heapBytes)
      return
    }
    if (message.type !== 'progress' || this.failure) return
    if (--this.owed === 0) this.watchdog?.close()
    for (const line of message.logs) this.options.onLog?.(line)
    for (const entry of message.settled) this.settle(entry)
    this.submit(message.calls)
  }

  private settle(entry: string): void {
    const cut = entry.indexOf('\n')
    const id = Number(entry.slice(0, cut))
    const evaluation = this.evaluations.get(id)
    if (!evaluation) return
    this.evaluations.delete(id)
    clearTimeout(evaluation.timer)
    const text = entry.slice(cut + 2)
    if (entry[cut + 1] === '1') evaluation.resolve(text === '' ? undefined : (JSON.parse(text) as JsonValue))
    else evaluation.reject(new CodeSessionError('runtime', text))
  }

  private submit(batch: string): void {
    for (const call of parseCalls(batch)) {
      if (this.scheduler.outstanding >= MAX_HOST_CALLS) {
        this.complete(call.id, {
          ok: false,
          message: `the session already waits for ${MAX_HOST_CALLS} host calls; await some before making more`,
          code: 'CALL_LIMIT',
        })
        continue
      }
      const parsed = parseArgs(call)
      if ('failed' in parsed) this.complete(call.id, parsed.failed)
      else this.scheduler.submit(call.wire, parsed.args, (outcome) => this.complete(call.id, outcome))
    }
    this.scheduler.pump()
  }

  private complete(id: string, outcome: CallOutcome): void {
    if (this.failure) return
    this.completions.push(encodeCompletion(id, boundOutcome(outcome, this.limits.memoryBytes)))
    if (this.flushQueued) return
    // Completions of one tick travel together.
    this.flushQueued = true
    queueMicrotask(() => {
      this.flushQueued = false
      if (!this.failure && this.completions.length) this.send({ type: 'settle', completions: this.completions.splice(0), took: 0 })
    })
  }

  /** Ends the session once: every pending evaluation rejects with `failure`, host calls are aborted. */
  private end(failure: CodeSessionError, closing = false): void {
    if (this.failure) return
    this.failure = failure
    this.owed = 0
    this.watchdog?.close()
    for (const evaluation of this.evaluations.values()) {
      clearTimeout(evaluation.timer)
      evaluation.reject(failure)
    }
    this.evaluations.clear()
    void this.scheduler.close()
    if (!closing) this.options.onEnd?.(failure)
  }
}
