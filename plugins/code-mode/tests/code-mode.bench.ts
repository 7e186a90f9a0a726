import { beforeAll, bench, describe } from 'vitest'
import Schema from 'schemastery'
import { newQuickJSAsyncWASMModule, newQuickJSWASMModule } from 'quickjs-emscripten'
import { defineTool } from '@cordage/core'
import { compare, createTestContext, type TestContext } from '@cordage/testing'
import * as codeMode from '../src/index.js'

// Cold start: one whole run_code call of `return 1` (fresh runtime + context + prelude, shared WASM
// module) against one direct call of a trivial tool. Nested round trip: a program making CALLS calls,
// minus the empty program, per call, against the same calls made directly through ctx.tools.execute
// (with a parent token, so both take the nested path). Medians of interleaved rounds.
const CALLS = 200
let ctx: TestContext
const parent = Symbol('bench')

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: Schema.object({ a: Schema.number().required(), b: Schema.number().required() }),
  output: { schema: Schema.object({ sum: Schema.number().required() }), render: (_a, v) => [{ type: 'text', text: String(v.sum) }] },
  execute: (args) => ({ sum: args.a + args.b }),
  concurrency: 'parallel',
})

const runCode = (code: string) => ctx.tools.execute({ name: 'run_code', arguments: { code } })
const program = `let s = 0; for (let i = 0; i < ${CALLS}; i++) s += (await tools.add({ a: i, b: 1 })).sum; return s`
async function direct(): Promise<void> {
  for (let i = 0; i < CALLS; i++) await ctx.tools.execute({ name: 'add', arguments: { a: i, b: 1 }, parent })
}

async function variantCreation(): Promise<void> {
  const time = (label: string, fn: () => void) => {
    const samples: number[] = []
    for (let i = 0; i < 60; i++) {
      const start = performance.now()
      fn()
      samples.push(performance.now() - start)
    }
    samples.sort((a, b) => a - b)
    return `${label} ${samples[30].toFixed(3)} ms`
  }
  let start = performance.now()
  const sync = await newQuickJSWASMModule()
  const syncLoad = performance.now() - start
  start = performance.now()
  const asyncify = await newQuickJSAsyncWASMModule()
  const asyncLoad = performance.now() - start
  const create = (module: typeof sync | typeof asyncify) => () => {
    const runtime = module.newRuntime()
    runtime.newContext().dispose()
    runtime.dispose()
  }
  console.log([
    '\nQuickJS variants: fresh runtime + context (median of 60)',
    `  ${time('sync (used)', create(sync))}; ${time('asyncify', create(asyncify))}`,
    `  loading a WASM module (paid once, then reused): sync ${syncLoad.toFixed(1)} ms, asyncify ${asyncLoad.toFixed(1)} ms`,
  ].join('\n'))
}

beforeAll(async () => {
  ctx = await createTestContext({ print: false })
  await ctx.plugin({ name: 'bench-tools', inject: ['tools'], apply: (inner) => void inner.tools.register(add) })
  await ctx.plugin(codeMode, { cpuTimeMs: 60_000, timeoutMs: 600_000 })
  await variantCreation()
  const cold = await compare('run_code cold start (one run of `return 1`) vs one direct call',
    { name: 'direct ctx.tools.execute(add)', fn: () => ctx.tools.execute({ name: 'add', arguments: { a: 1, b: 2 } }) },
    [{ name: 'run_code `return 1`', fn: () => runCode('return 1') }],
    { iterations: 20, rounds: 9, warmup: 20, unit: 'ms' })
  const nested = await compare(`${CALLS} calls: inside one program vs direct`,
    { name: `${CALLS} direct calls`, fn: direct },
    [{ name: `run_code with ${CALLS} nested calls`, fn: () => runCode(program) }, { name: 'run_code `return 0` (subtracted)', fn: () => runCode('return 0') }],
    { iterations: 2, rounds: 9, warmup: 2, unit: 'ms' })
  const perNested = (nested[`run_code with ${CALLS} nested calls`] - nested['run_code `return 0` (subtracted)']) / CALLS
  const perDirect = nested[`${CALLS} direct calls`] / CALLS
  // Process CPU time (user + system) is far less sensitive to other load on the machine than wall time.
  const cpu = { nested: [] as number[], empty: [] as number[], direct: [] as number[], cold: [] as number[] }
  const cpuOf = async (fn: () => Promise<unknown>) => {
    const start = process.cpuUsage()
    await fn()
    const used = process.cpuUsage(start)
    return used.user + used.system
  }
  for (let round = 0; round < 9; round++) {
    cpu.nested.push(await cpuOf(() => runCode(program)))
    cpu.empty.push(await cpuOf(() => runCode('return 0')))
    cpu.direct.push(await cpuOf(direct))
    cpu.cold.push(await cpuOf(async () => { for (let i = 0; i < 20; i++) await runCode('return 1') }) / 20)
  }
  const mid = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
  const cpuNested = (mid(cpu.nested) - mid(cpu.empty)) / CALLS
  const cpuDirect = mid(cpu.direct) / CALLS
  console.log([
    '\nSummary',
    `  cold start: ${(cold['run_code `return 1`'] / 1000).toFixed(2)} ms per run (target ≤ 5 ms); a direct call ${cold['direct ctx.tools.execute(add)'].toFixed(1)} µs`,
    `  nested call round trip: ${perNested.toFixed(1)} µs vs ${perDirect.toFixed(1)} µs direct → ${(perNested / perDirect).toFixed(2)}× (target ≤ 150 µs)`,
    `  CPU time (median of 9): cold start ${(mid(cpu.cold) / 1000).toFixed(2)} ms; nested call ${cpuNested.toFixed(1)} µs vs ${cpuDirect.toFixed(1)} µs direct → ${(cpuNested / cpuDirect).toFixed(2)}×`,
  ].join('\n'))
}, 600_000)

describe('code-mode', () => {
  bench('run_code `return 1`', async () => {
    await runCode('return 1')
  }, { iterations: 20, warmupIterations: 5 })
  bench(`run_code with ${CALLS} nested calls`, async () => {
    await runCode(program)
  }, { iterations: 3, warmupIterations: 1 })
  bench(`${CALLS} direct calls`, direct, { iterations: 3, warmupIterations: 1 })
})
