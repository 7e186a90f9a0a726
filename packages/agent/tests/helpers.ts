import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { afterEach } from 'vitest'
import { defineTool, type ToolConcurrency } from '@cordage/core'

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

/** A tool that sleeps `ms` (abortably) and records when its body ran. */
export function sleepTool(name: string, concurrency: ToolConcurrency | undefined, intervals: Interval[]) {
  return defineTool({
    name,
    description: `Sleeps, ${concurrency ?? 'exclusive'}.`,
    parameters: Schema.object({ label: Schema.string().required(), ms: Schema.natural().default(40) }),
    output: { schema: Schema.object({ label: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `slept ${value.label}` }] },
    ...(concurrency !== undefined && { concurrency }),
    async execute(args, exec) {
      const start = performance.now()
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          exec.signal.removeEventListener('abort', done)
          resolve()
        }
        const timer = setTimeout(done, args.ms)
        exec.signal.addEventListener('abort', done, { once: true })
      })
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
