import type { CodeRunFailureKind } from './errors.js'

/** The per-run limits; each breach ends the run with a `CodeRunError` of the matching kind. */
export interface SandboxLimits {
  memoryBytes: number
  stackBytes: number
  cpuTimeMs: number
  timeoutMs: number
  maxOutputBytes: number
  maxCalls: number
}

const LIMIT_DETAIL: Partial<Record<CodeRunFailureKind, (limits: SandboxLimits) => string>> = {
  cpu: (l) => `the program used more than ${l.cpuTimeMs} ms of CPU time and was stopped (an endless loop?)`,
  timeout: (l) => `the program did not finish within ${l.timeoutMs} ms and was stopped`,
  memory: (l) => `the program exceeded the memory limit of ${l.memoryBytes} bytes`,
  calls: (l) => `the program made more than ${l.maxCalls} tool calls`,
  output: (l) => `the program's logs and result exceeded ${l.maxOutputBytes} bytes`,
}

/** The model-readable sentence for a breached limit. */
export function limitDetail(kind: CodeRunFailureKind, limits: SandboxLimits): string {
  return LIMIT_DETAIL[kind]?.(limits) ?? `the program was stopped (${kind})`
}

/**
 * How far past `cpuTimeMs` the host lets a busy worker run before terminating it. The worker stops a
 * program itself at `cpuTimeMs` when the interpreter polls its interrupt handler; this margin only
 * matters for what never polls (a promise-job flood, one long built-in call).
 */
export const CPU_GRACE_MS = 20

/**
 * The CPU meter the worker writes and the host reads, in a shared `Float64Array`: slot 0 is the
 * absolute time (`performance.timeOrigin + performance.now()`, ms) the worker entered the VM, 0 while
 * it is outside; slot 1 the milliseconds spent inside the VM during the current run.
 */
export const METER_SLOTS = 2

/** Milliseconds the current run has spent inside the VM, counting a segment still in progress. */
export function cpuUsed(meter: Float64Array, now = performance.timeOrigin + performance.now()): number {
  const entered = meter[0]!
  return meter[1]! + (entered > 0 ? Math.max(0, now - entered) : 0)
}

/**
 * The host's watch over one run: the wall-clock deadline, and the CPU budget read from the shared
 * meter (so a worker stuck in one VM entry is seen without any message from it). Calls `stop` once.
 */
export class Watchdog {
  private cpuTimer: NodeJS.Timeout | undefined
  private readonly wallTimer: NodeJS.Timeout
  private stopped = false

  constructor(
    private readonly meter: Float64Array,
    private readonly limits: SandboxLimits,
    private readonly stop: (kind: 'cpu' | 'timeout') => void,
  ) {
    this.wallTimer = setTimeout(() => this.fire('timeout'), limits.timeoutMs)
    this.armCpu(limits.cpuTimeMs + CPU_GRACE_MS)
  }

  /** Stops watching (the run ended). */
  close(): void {
    this.stopped = true
    clearTimeout(this.wallTimer)
    clearTimeout(this.cpuTimer)
  }

  // The earliest the budget can run out is after the unused part of it; re-check then.
  private armCpu(delayMs: number): void {
    this.cpuTimer = setTimeout(() => {
      const left = this.limits.cpuTimeMs + CPU_GRACE_MS - cpuUsed(this.meter)
      if (left <= 0) this.fire('cpu')
      else if (!this.stopped) this.armCpu(Math.ceil(left))
    }, delayMs)
  }

  private fire(kind: 'cpu' | 'timeout'): void {
    if (this.stopped) return
    this.close()
    this.stop(kind)
  }
}
