import Schema from 'schemastery'
import type { Context, Fiber } from 'cordis'
import { afterEach } from 'vitest'
import { defineTool, type ToolExecutionResult, type ToolExec, type ToolDefinition } from '@cordage/core'
import { createTestContext, type TestContext } from '@cordage/testing'
import * as codeMode from '../src/index.js'

/** A parallel-safe tool returning a nested value. */
export const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up a user by id.',
  parameters: Schema.object({ id: Schema.natural().required().description('User id') }),
  output: {
    schema: Schema.object({
      id: Schema.natural().required(),
      name: Schema.string().required(),
      tags: Schema.array(Schema.string()).required(),
      profile: Schema.object({ active: Schema.boolean().required(), score: Schema.number() }).required(),
    }),
    render: (_args, value) => [{ type: 'text', text: `user ${value.name}` }],
  },
  execute: (args) => ({ id: args.id, name: `user-${args.id}`, tags: ['a', 'b'], profile: { active: true, score: 0.5 } }),
  concurrency: 'parallel',
})

/** Sleeps `ms` (honouring the abort signal) and records when it started and ended. */
export function sleeper(
  name: string,
  concurrency: 'parallel' | 'exclusive',
  log: Array<{ name: string; id: number; start: number; end: number; aborted: boolean }>,
): ToolDefinition {
  return defineTool({
    name,
    description: `Sleeps (${concurrency}).`,
    parameters: Schema.object({ id: Schema.natural().required(), ms: Schema.natural().default(30) }),
    output: { schema: Schema.object({ id: Schema.natural().required() }), render: (_a, v) => [{ type: 'text', text: `slept ${v.id}` }] },
    concurrency,
    execute: (args, exec) =>
      new Promise<{ id: number }>((resolve, reject) => {
        const start = performance.now()
        const onAbort = () => {
          clearTimeout(timer)
          log.push({ name, id: args.id, start, end: performance.now(), aborted: true })
          reject(new Error('aborted'))
        }
        const timer = setTimeout(() => {
          exec.signal.removeEventListener('abort', onAbort)
          log.push({ name, id: args.id, start, end: performance.now(), aborted: false })
          resolve({ id: args.id })
        }, args.ms)
        exec.signal.addEventListener('abort', onAbort, { once: true })
      }),
  })
}

// Each loaded code-mode keeps warm worker threads: unload it after every test.
const loaded: Fiber[] = []
afterEach(async () => {
  await Promise.all(loaded.splice(0).map((fiber) => fiber.dispose()))
})

/** Loads `tools` in a plugin, then code-mode with `config` (unloaded after the test); records every `tools/result`. */
export async function setup(
  tools: ToolDefinition[],
  config: Partial<codeMode.Config> = {},
): Promise<{
  ctx: TestContext
  fiber: Fiber
  results: Array<{ exec: ToolExec; result: ToolExecutionResult }>
  run: (code: string) => Promise<ToolExecutionResult>
}> {
  const ctx = await createTestContext()
  await ctx.plugin({
    name: 'fixture-tools',
    inject: ['tools'],
    apply: (inner: Context) => {
      for (const tool of tools) inner.tools.register(tool)
    },
  })
  const fiber = await ctx.plugin(codeMode, config)
  loaded.push(fiber)
  const results: Array<{ exec: ToolExec; result: ToolExecutionResult }> = []
  ctx.on('tools/result', (exec, result) => void results.push({ exec, result }))
  const run = (code: string) => ctx.tools.execute({ name: 'run_code', arguments: { code } })
  return { ctx, fiber, results, run }
}

export { valueOf } from '@cordage/testing'

/** The failure message and code of a failed result. */
export function failureOf(result: ToolExecutionResult): { code?: string; message: string } {
  if (!result.isError) throw new Error(`expected failure, got: ${JSON.stringify(result.value)}`)
  return { code: result.error.info?.code, message: result.error.message }
}
