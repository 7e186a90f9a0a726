import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads'
import { METER_SLOTS, type SandboxLimits } from './budget.js'
import { createLogBuffer } from './output.js'
import { awaitMail, CONTROL_SLOTS, DOORBELL, DOWN_LENGTH, MAILBOX_BYTES, Spinner, workerWindow, writeBox } from './channel.js'
import type { HostMessage, WorkerData, WorkerMessage } from './protocol.js'

// The `WebAssembly` global (this project's lib settings carry no types for it).
const wasm = (globalThis as any).WebAssembly as { compile(bytes: Uint8Array): Promise<CompiledModule> }
type CompiledModule = WorkerData['wasmModule']

// Compiled once per process and shared by every worker (a WebAssembly.Module crosses threads).
let compiled: Promise<CompiledModule> | undefined
function compileQuickJS(): Promise<CompiledModule> {
  compiled ??= (async () => {
    const fromHere = createRequire(import.meta.url)
    const fromQuickJS = createRequire(fromHere.resolve('quickjs-emscripten'))
    return wasm.compile(await readFile(fromQuickJS.resolve('@jitl/quickjs-wasmfile-release-sync/wasm')))
  })()
  compiled.catch(() => (compiled = undefined))
  return compiled
}

// A worker whose WASM heap grew past this (a memory-hungry run) is replaced, so its pages go back.
const RECYCLE_ABOVE_BYTES = 24 << 20

// Replies taken by spinning are handled without a return to the event loop (one tool call's promise
// chain leads to the next). After this long, stop spinning until the loop has polled I/O once.
const STREAK_MS = 10
let streakStart = -1
function streakAllows(): boolean {
  const now = performance.now()
  if (streakStart < 0) {
    streakStart = now
    setImmediate(() => (streakStart = -1))
  }
  return now - streakStart < STREAK_MS
}

/** One worker thread with its shared log buffer and CPU meter. Runs one program at a time. */
export class SandboxWorker {
  readonly logs: SharedArrayBuffer
  readonly meter: Float64Array
  /** The run or session holding this worker: it receives the messages and learns when the thread ends. */
  holder: { message(message: WorkerMessage): void; exit(error: Error | undefined): void; session?: boolean } | undefined
  /** Called once when the thread ends for any reason (the pool's bookkeeping). */
  onExit: (() => void) | undefined
  readonly ready: Promise<void>
  exited = false
  /** What the thread died of, when it threw (e.g. `ERR_WORKER_OUT_OF_MEMORY` past its `resourceLimits`). */
  private error: Error | undefined
  private readonly thread: Worker
  private readonly inbox: MessagePort
  private readonly control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4))
  private readonly up = new Uint8Array(new SharedArrayBuffer(MAILBOX_BYTES))
  private readonly down = new Uint8Array(new SharedArrayBuffer(MAILBOX_BYTES))
  private readonly spinner: Spinner

  /** `alone`: whether this worker's run is the only one its pool is running (the host spins only then). */
  constructor(
    wasmModule: CompiledModule,
    limits: SandboxLimits,
    spinMicros: number,
    private readonly alone: () => boolean,
    rawLane = true,
  ) {
    this.spinner = new Spinner(spinMicros)
    this.logs = createLogBuffer(limits)
    const meterBuffer = new SharedArrayBuffer(METER_SLOTS * 8)
    this.meter = new Float64Array(meterBuffer)
    const channel = new MessageChannel()
    this.inbox = channel.port1
    const data: WorkerData = {
      wasmModule,
      limits,
      logBuffer: this.logs,
      meterBuffer,
      inbox: channel.port2,
      controlBuffer: this.control.buffer as SharedArrayBuffer,
      upBuffer: this.up.buffer as SharedArrayBuffer,
      downBuffer: this.down.buffer as SharedArrayBuffer,
      spinMicros: workerWindow(spinMicros),
      rawLane,
    }
    const memoryMb = Math.ceil(limits.memoryBytes / (1 << 20))
    this.thread = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: data,
      transferList: [channel.port2],
      // The worker's own JS heap only holds strings crossing the VM boundary (bounded by the VM's heap).
      resourceLimits: { maxOldGenerationSizeMb: 32 + 2 * memoryMb, maxYoungGenerationSizeMb: 8, stackSizeMb: 4 },
      stdout: false,
      stderr: false,
    })
    this.ready = new Promise((resolve, reject) => {
      this.thread.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') resolve()
        else this.deliver(message)
      })
      this.thread.on('error', (error) => {
        this.error = error
        reject(error)
      })
      this.thread.on('exit', (code) => {
        this.exited = true
        this.inbox.close()
        reject(new Error(`the sandbox worker exited with code ${code} before it was ready`))
        this.onExit?.()
        this.holder?.exit(this.error)
      })
    })
    this.ready.catch(() => {})
  }

  /**
   * Hands a message to the worker (a run's completions in its mailbox when they fit) and rings the
   * doorbell it sleeps on. `queued`: through the port only, for a session, whose messages may follow
   * one another before the worker read the mailbox (a second write would replace the first).
   */
  post(message: HostMessage, queued = false): void {
    // oxlint-disable-next-line unicorn/require-post-message-target-origin -- a MessagePort, not a window
    if (queued || message.type !== 'settle' || !writeBox(this.control, DOWN_LENGTH, this.down, message)) this.inbox.postMessage(message)
    Atomics.add(this.control, DOORBELL, 1)
    Atomics.notify(this.control, DOORBELL)
  }

  /**
   * After a `settle`: delivers the worker's reply to the holder at once when it arrives within the spin
   * window (a quick program step); otherwise it is posted and delivered from the event loop as usual.
   * Only while this is the pool's one running program: spinning for one would delay the others' replies.
   */
  takeReply(): void {
    if (this.exited || !this.alone() || !streakAllows()) return
    const reply = awaitMail(this.control, this.up, this.spinner) as WorkerMessage | undefined
    if (reply) this.deliver(reply)
  }

  /** Every reply, spun for or posted, reaches the holder here; a `wait` says how long the worker worked. */
  private deliver(message: WorkerMessage): void {
    if (message.type === 'wait') this.spinner.took = message.took
    this.holder?.message(message)
  }

  /** Stops the thread wherever it is (a microtask flood, a long built-in) and resolves once it ended. */
  async terminate(): Promise<void> {
    if (!this.exited) await this.thread.terminate()
  }
}

/**
 * Warm workers for runs. `acquire` hands out an idle one (or starts another when all are busy, so a
 * program whose host function runs another program cannot deadlock the pool); `release` keeps up to
 * `size` warm; a terminated or crashed worker is replaced in the background.
 */
export class SandboxPool {
  private readonly idle: SandboxWorker[] = []
  private readonly live = new Set<SandboxWorker>()
  private readonly waiters: Array<{ resolve: (worker: SandboxWorker) => void; reject: (error: unknown) => void }> = []
  /** Spawns not ready yet (waiting acquires are served by them), and those not constructed yet. */
  private starting = 0
  private compiling = 0
  private shutDown = false

  /**
   * `spinMicros`: how long the host spins for a worker's answer (0: never); workers spin `workerWindow(spinMicros)`.
   * `rawLane`: false makes workers cross into the VM through the library's public API only (`lane.js`; for tests).
   */
  constructor(
    private readonly size: number,
    private readonly limits: SandboxLimits,
    private readonly spinMicros = 0,
    private readonly rawLane = true,
  ) {}

  /** Whether `dispose` was called. */
  get disposed(): boolean {
    return this.shutDown
  }

  /** Starts workers until `size` are live or starting; a failed start rejects one waiting `acquire`. */
  warm(): void {
    while (!this.shutDown && this.live.size + this.compiling < this.size) {
      this.spawn().then(
        (worker) => this.release(worker, 0),
        (error: unknown) => this.waiters.shift()?.reject(error),
      )
    }
  }

  /** A ready worker for one run: an idle one, the next one starting, or a new one when all are busy. */
  acquire(): Promise<SandboxWorker> {
    if (this.shutDown) return Promise.reject(new Error('the sandbox pool was shut down'))
    const worker = this.idle.pop()
    if (worker) return Promise.resolve(worker)
    if (this.waiters.length < this.starting) return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }))
    return this.spawn()
  }

  /** Gives a worker back after a run that ended cleanly; `heapBytes` is its WASM memory now. */
  release(worker: SandboxWorker, heapBytes: number): void {
    worker.holder = undefined
    if (this.shutDown || worker.exited || heapBytes > RECYCLE_ABOVE_BYTES) return void this.discard(worker)
    const waiter = this.waiters.shift()
    if (waiter) return waiter.resolve(worker)
    if (this.idle.length >= this.size) return void this.discard(worker)
    this.idle.push(worker)
  }

  /** Terminates a worker (it was stopped mid-run, or is no longer wanted); the pool refills. */
  async discard(worker: SandboxWorker): Promise<void> {
    await worker.terminate()
  }

  /** How many workers hold a run (a session holds its worker while idle, so it does not count). */
  private running(): number {
    let count = 0
    for (const worker of this.live) if (worker.holder && !worker.holder.session) count++
    return count
  }

  /** Terminates every worker, busy ones included, and resolves once all threads ended. */
  async dispose(): Promise<void> {
    this.shutDown = true
    this.idle.length = 0
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error('the sandbox pool was shut down'))
    await Promise.all([...this.live].map((worker) => worker.terminate()))
  }

  private async spawn(): Promise<SandboxWorker> {
    this.starting++
    this.compiling++
    let worker: SandboxWorker
    try {
      worker = new SandboxWorker(await compileQuickJS(), this.limits, this.spinMicros, () => this.running() <= 1, this.rawLane)
      this.live.add(worker)
    } catch (error) {
      this.starting--
      throw error
    } finally {
      this.compiling--
    }
    worker.onExit = () => {
      this.live.delete(worker)
      const index = this.idle.indexOf(worker)
      if (index >= 0) this.idle.splice(index, 1)
      this.warm()
    }
    try {
      if (this.shutDown) await worker.terminate()
      await worker.ready
      return worker
    } finally {
      this.starting--
    }
  }
}
