import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { ConversionReply, ConversionRequest } from './convert-worker.js'
import type { ConvertOptions, Converted } from './convert.js'
import { WebError } from './errors.js'

/** The budget of one conversion and of the threads that run them. */
export interface ConverterLimits {
  /** Wall time one conversion may take once a thread has it. */
  timeoutMs: number
  /** Heap (old generation) of a conversion thread; past it the thread ends and the conversion fails. */
  memoryMb: number
}

// A thread that converted a page larger than this, or whose heap passed half its limit, is replaced, so
// the memory a large page took goes back to the system (a thread's heap only shrinks when V8 decides).
const RECYCLE_AFTER_BYTES = 1 << 20
// An idle thread is stopped after this long: a host that fetches once keeps no thread.
const IDLE_MS = 30_000
const WORKERS = Math.max(1, Math.min(2, availableParallelism()))

interface Job {
  request: ConversionRequest
  /** The body's size (its buffer is detached once transferred). */
  size: number
  transfer: ArrayBuffer[]
  signal: AbortSignal
  resolve(converted: Converted): void
  reject(error: unknown): void
  detach(): void
}

interface Thread {
  worker: Worker
  /** Whether its converters are loaded: a job's budget starts then, not while the thread starts. */
  ready: boolean
  job?: Job
  timer?: NodeJS.Timeout
  /** Why the thread is being stopped while it runs a job: what that job fails with. */
  stopping?: unknown
  /** What the thread died of (`ERR_WORKER_OUT_OF_MEMORY` past its heap limit). */
  error?: Error
  exited: Promise<void>
}

/**
 * Converts response bodies on worker threads, off the host's event loop, each within a time and memory
 * budget: a conversion past its budget, or whose caller aborts, has its thread terminated (its memory goes
 * with it). At most two threads; further conversions wait for one.
 */
export class Converter {
  private readonly threads = new Set<Thread>()
  private readonly queue: Job[] = []
  private closed = false

  constructor(private readonly limits: ConverterLimits) {}

  /** Converts `body` (its bytes are handed to the thread: do not use the buffer afterwards). */
  convert(body: Buffer, contentType: string, options: ConvertOptions, signal: AbortSignal): Promise<Converted> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new WebError('WEB_FETCH_FAILED', 'the web plugin was unloaded'))
      if (signal.aborted) return reject(signal.reason)
      // A Buffer may be a view into a shared pool: only an ArrayBuffer of its own is transferred.
      const bytes =
        body.byteOffset === 0 && body.byteLength === body.buffer.byteLength
          ? (body.buffer as ArrayBuffer)
          : (body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
      const onAbort = () => this.abort(job, signal.reason)
      const job: Job = {
        request: { body: bytes, contentType, options },
        size: bytes.byteLength,
        transfer: [bytes],
        signal,
        resolve,
        reject,
        detach: () => signal.removeEventListener('abort', onAbort),
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.queue.push(job)
      this.dispatch()
    })
  }

  /** Stops every thread and fails what is queued; resolves once the threads have exited. */
  async close(): Promise<void> {
    this.closed = true
    const unloaded = new WebError('WEB_FETCH_FAILED', 'the web plugin was unloaded')
    for (const job of this.queue.splice(0)) this.settle(job, unloaded)
    const threads = [...this.threads]
    for (const thread of threads) this.stop(thread, unloaded)
    await Promise.all(threads.map((thread) => thread.exited))
  }

  private dispatch(): void {
    while (this.queue.length) {
      const thread = [...this.threads].find((candidate) => !candidate.job && candidate.stopping === undefined) ?? this.spawn()
      if (!thread) return
      this.run(thread, this.queue.shift()!)
    }
  }

  private spawn(): Thread | undefined {
    if (this.closed || this.threads.size >= WORKERS) return undefined
    const worker = new Worker(new URL('./convert-worker.js', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb, stackSizeMb: 4 },
      stdout: false,
      stderr: false,
    })
    const thread: Thread = { worker, ready: false, exited: new Promise((resolve) => worker.once('exit', () => resolve())) }
    worker.on('message', (reply: ConversionReply) => this.answer(thread, reply))
    worker.on('error', (error) => (thread.error = error))
    void thread.exited.then(() => this.exit(thread))
    this.threads.add(thread)
    return thread
  }

  private run(thread: Thread, job: Job): void {
    clearTimeout(thread.timer)
    thread.job = job
    thread.worker.ref()
    thread.worker.postMessage(job.request, job.transfer)
    if (thread.ready) this.startBudget(thread)
  }

  private startBudget(thread: Thread): void {
    thread.timer = setTimeout(
      () =>
        this.stop(
          thread,
          new WebError(
            'WEB_CONVERSION_LIMIT',
            `converting the page took longer than ${this.limits.timeoutMs} ms and was stopped; fetch it with format "html" for the source, or a more specific URL`,
          ),
        ),
      this.limits.timeoutMs,
    )
  }

  private answer(thread: Thread, reply: ConversionReply): void {
    if (reply.type === 'ready') {
      thread.ready = true
      if (thread.job && thread.stopping === undefined) this.startBudget(thread)
      return
    }
    const job = thread.job
    if (!job || thread.stopping !== undefined) return
    clearTimeout(thread.timer)
    thread.job = undefined
    if (reply.ok) this.settle(job, undefined, reply.converted)
    else this.settle(job, new WebError(reply.code as 'WEB_CONVERSION_FAILED', reply.message))
    if (job.size > RECYCLE_AFTER_BYTES || reply.heapBytes > (this.limits.memoryMb << 20) / 2) this.stop(thread, undefined)
    else this.idle(thread)
    this.dispatch()
  }

  private idle(thread: Thread): void {
    // An idle thread does not keep the process alive, and goes after a while.
    thread.worker.unref()
    thread.timer = setTimeout(() => this.stop(thread, undefined), IDLE_MS)
    thread.timer.unref()
  }

  /** Terminates a thread; its job (if any) fails with `reason` once the thread has exited. */
  private stop(thread: Thread, reason: unknown): void {
    if (thread.stopping !== undefined) return
    clearTimeout(thread.timer)
    thread.stopping = reason ?? null
    void thread.worker.terminate()
  }

  private exit(thread: Thread): void {
    clearTimeout(thread.timer)
    this.threads.delete(thread)
    const job = thread.job
    thread.job = undefined
    if (job) {
      const memory = (thread.error as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
      const reason = memory
        ? new WebError(
            'WEB_CONVERSION_LIMIT',
            `converting the page needed more than ${this.limits.memoryMb} MB and was stopped; fetch it with format "html" for the source, or a more specific URL`,
          )
        : (thread.stopping ??
          new WebError('WEB_CONVERSION_FAILED', `the page could not be converted: ${thread.error?.message ?? 'the conversion thread ended'}`))
      this.settle(job, reason)
    }
    this.dispatch()
  }

  private abort(job: Job, reason: unknown): void {
    const queued = this.queue.indexOf(job)
    if (queued >= 0) {
      this.queue.splice(queued, 1)
      return this.settle(job, reason)
    }
    for (const thread of this.threads) if (thread.job === job) this.stop(thread, reason)
  }

  private settle(job: Job, error: unknown, converted?: Converted): void {
    job.detach()
    if (converted) job.resolve(converted)
    else job.reject(error)
  }
}
