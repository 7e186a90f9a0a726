import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach } from 'vitest'
import { defineTool, type ToolConcurrency, type ToolExec } from '@cordage/core'

const dirs: string[] = []

/** A fresh temporary directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-test-'))
  dirs.push(dir)
  return dir
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** One recorded execution interval of a `sleep` tool body. */
export interface Interval {
  label: string
  start: number
  end: number
}

/**
 * Tool bodies that run until the test releases them (or their call is aborted), so a test orders calls by
 * what it saw running rather than by sleeps a loaded machine may stretch.
 */
export class Gate {
  /** The labels of the bodies running now. */
  readonly running = new Set<string>()
  private readonly releases = new Map<string, () => void>()
  private readonly watchers = new Set<() => void>()

  /** Runs a body labelled `label` until `release(label)` or the signal aborts. */
  hold(label: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done)
        this.releases.delete(label)
        this.running.delete(label)
        resolve()
      }
      this.releases.set(label, done)
      this.running.add(label)
      signal.addEventListener('abort', done, { once: true })
      for (const watcher of this.watchers) watcher()
    })
  }

  /** Ends the bodies labelled `labels`. */
  release(...labels: string[]): void {
    for (const label of labels) {
      const release = this.releases.get(label)
      if (!release) throw new Error(`${label} is not running (running: ${[...this.running].join(', ') || 'none'})`)
      release()
    }
  }

  /**
   * Waits until the bodies labelled `labels` are running at once, then one more turn of the event loop for
   * anything dispatched with them, and fails unless exactly those run. `hangMs` is a hang bound: the calls
   * start within milliseconds when the agent dispatches them together, and never when it does not.
   */
  async whenRunning(labels: string[], hangMs = 15_000): Promise<void> {
    const all = () => labels.every((label) => this.running.has(label))
    if (!all()) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.watchers.delete(watch)
          reject(new Error(`${labels.join(', ')} never ran at once (running: ${[...this.running].join(', ') || 'none'})`))
        }, hangMs)
        const watch = () => {
          if (!all()) return
          clearTimeout(timer)
          this.watchers.delete(watch)
          resolve()
        }
        this.watchers.add(watch)
      })
    }
    await new Promise((resolve) => setImmediate(resolve))
    const running = [...this.running].sort()
    if (running.join() !== [...labels].sort().join()) throw new Error(`expected exactly ${labels.join(', ')} running, found ${running.join(', ')}`)
  }
}

/**
 * A tool that sleeps `ms` (abortably) and records when its body ran; with `held: true` it runs until
 * `gate` releases its label instead.
 */
export function sleepTool(name: string, concurrency: ToolConcurrency | undefined, intervals: Interval[], gate?: Gate) {
  return defineTool({
    name,
    description: `Sleeps, ${concurrency ?? 'exclusive'}.`,
    parameters: Schema.object({ label: Schema.string().required(), ms: Schema.natural().default(40), held: Schema.boolean() }),
    output: { schema: Schema.object({ label: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `slept ${value.label}` }] },
    ...(concurrency !== undefined && { concurrency }),
    async execute(args, exec) {
      const start = performance.now()
      if (args.held && gate) await gate.hold(args.label, exec.signal)
      else {
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer)
            exec.signal.removeEventListener('abort', done)
            resolve()
          }
          const timer = setTimeout(done, args.ms)
          exec.signal.addEventListener('abort', done, { once: true })
        })
      }
      intervals.push({ label: args.label, start, end: performance.now() })
      return { label: args.label }
    },
  })
}

/** A tool whose value holds `secret`, which its render never shows. */
export function secretTool(secret: string) {
  return defineTool({
    name: 'lookup',
    description: 'Looks up a record.',
    parameters: Schema.object({ key: Schema.string().required() }),
    output: {
      schema: Schema.object({ key: Schema.string().required(), secret: Schema.string().required() }),
      render: (args) => [{ type: 'text', text: `found ${args.key}` }],
      presentationMeta: (args) => ({ key: args.key }),
    },
    concurrency: 'parallel',
    execute: (args) => ({ key: args.key, secret }),
  })
}

/** A parallel-safe tool that queues `text` as additional context for its result. */
export function noteTool() {
  return defineTool({
    name: 'note',
    description: 'Adds a context note.',
    parameters: Schema.object({ text: Schema.string().required() }),
    output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'noted' }] },
    concurrency: 'parallel',
    execute(args, exec) {
      exec.deferContext({ source: 'lint', text: args.text })
      return { ok: true }
    },
  })
}

/** A tool `name` with no parameters that records each call in `calls` as `<name>:<key(exec)>` (default: the calling agent). */
export function counter(name: string, calls: string[], key: (exec: ToolExec) => unknown = (exec) => exec.agent) {
  return defineTool({
    name,
    description: `Counts calls of ${name}.`,
    parameters: Schema.object({}),
    output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: `${name} ok` }] },
    execute(_args, exec) {
      calls.push(`${name}:${key(exec)}`)
      return { ok: true }
    },
  })
}
