import { afterAll, beforeAll, bench, describe } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { compare, createTestContext, type TestContext } from '@cordage/testing'
import * as codeMode from '../src/index.js'
import { SandboxPool } from '../src/pool.js'

// Cold start: one whole run_code call of `return 1` on a warm pooled worker (fresh runtime + context
// + prelude, made while the worker was idle) against one direct call of a trivial tool. Nested round
// trip: a program making CALLS calls, minus the empty program, per call, against the same calls made
// directly through ctx.tools.execute (with a parent token, so both take the nested path). Stop
// latency: how long after its CPU budget a hostile program's run_code returns; and how long a direct call
// waits while one runs (tests assert only that calls are answered during it). Medians of interleaved rounds.
const CALLS = 200
let ctx: TestContext
// The same plugin with spinning off: every crossing sleeps and is woken.
let still: TestContext
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

const limits = { memoryBytes: 32 << 20, stackBytes: 256 << 10, cpuTimeMs: 100, timeoutMs: 60_000, maxOutputBytes: 65_536, maxCalls: 5000 }
const mid = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!

// What the pool saves: starting a worker thread and instantiating the (already compiled) QuickJS module in it.
async function workerStart(): Promise<string> {
  const samples: number[] = []
  for (let i = 0; i < 7; i++) {
    const pool = new SandboxPool(1, limits)
    const start = performance.now()
    const worker = await pool.acquire()
    samples.push(performance.now() - start)
    pool.release(worker, 0)
    await pool.dispose()
  }
  return `  worker start (thread + QuickJS instance + warm-up), what the warm pool avoids: ${mid(samples).toFixed(1)} ms (median of 7)`
}

// The budget is 100 ms of CPU; the figure is the wall time of the whole run_code call minus that budget.
let hostile: TestContext
const attacks = {
  'busy loop (interrupt handler)': 'for (;;) {}',
  'microtask flood (worker terminated)': '(function loop(){ Promise.resolve().then(loop) })(); await new Promise(() => {})',
  'long built-in (worker terminated)': 'let n = 0; for (;;) n += "x".repeat(3e7).length',
}
// A stopped worker is replaced in the background (a worker start each): let the pool refill first, so
// the figure is the stop, not the wait for a free worker.
const refilled = () => new Promise((resolve) => setTimeout(resolve, 500))

async function stopLatency(): Promise<string> {
  const lines: string[] = []
  for (const [label, code] of Object.entries(attacks)) {
    const samples: number[] = []
    for (let i = 0; i < 7; i++) {
      await refilled()
      const start = performance.now()
      const result = await hostile.tools.execute({ name: 'run_code', arguments: { code } })
      samples.push(performance.now() - start - limits.cpuTimeMs)
      if (!result.isError || !/\(cpu\)/.test(result.error.message)) throw new Error(`unexpected outcome: ${JSON.stringify(result)}`)
    }
    lines.push(`  ${label.padEnd(40)} stopped ${mid(samples).toFixed(1)} ms past the limit (median of 7; target ≤ 100 ms)`)
  }
  const cancel: number[] = []
  for (let i = 0; i < 7; i++) {
    await refilled()
    const controller = new AbortController()
    const pending = hostile.tools.execute({ name: 'run_code', arguments: { code: attacks['microtask flood (worker terminated)'] }, signal: controller.signal })
    await new Promise((resolve) => setTimeout(resolve, 50))
    const start = performance.now()
    controller.abort()
    await pending
    cancel.push(performance.now() - start)
  }
  lines.push(`  ${'cancel during a microtask flood'.padEnd(40)} returned ${mid(cancel).toFixed(1)} ms after the abort (median of 7; target ≤ 100 ms)`)
  for (const [label, code] of Object.entries(attacks)) {
    const slowest: number[] = []
    for (let i = 0; i < 7; i++) {
      await refilled()
      slowest.push(await slowestDirectCallWhile(hostile.tools.execute({ name: 'run_code', arguments: { code } })))
    }
    lines.push(`  ${label.padEnd(40)} slowest direct call while it ran ${mid(slowest).toFixed(1)} ms (median of 7 runs; target ≤ 100 ms)`)
  }
  return lines.join('\n')
}

/** The slowest of the direct calls made every 10 ms while `running` is unsettled, in ms: how responsive the host stays. */
async function slowestDirectCallWhile(running: Promise<unknown>): Promise<number> {
  const state = { finished: false }
  void running.finally(() => (state.finished = true))
  let slowest = 0
  while (!state.finished) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const start = performance.now()
    await hostile.tools.execute({ name: 'add', arguments: { a: 1, b: 2 } })
    slowest = Math.max(slowest, performance.now() - start)
  }
  return slowest
}

beforeAll(async () => {
  ctx = await createTestContext({ print: false })
  await ctx.plugin({ name: 'bench-tools', inject: ['tools'], apply: (inner) => void inner.tools.register(add) })
  await ctx.plugin(codeMode, { cpuTimeMs: 60_000, timeoutMs: 600_000 })
  still = await createTestContext({ print: false })
  await still.plugin({ name: 'bench-tools', inject: ['tools'], apply: (inner) => void inner.tools.register(add) })
  await still.plugin(codeMode, { cpuTimeMs: 60_000, timeoutMs: 600_000, spinMicros: 0 })
  hostile = await createTestContext({ print: false })
  await hostile.plugin({ name: 'bench-tools', inject: ['tools'], apply: (inner) => void inner.tools.register(add) })
  await hostile.plugin(codeMode, { cpuTimeMs: limits.cpuTimeMs, memoryBytes: 64 << 20 })
  await runCode('return 0')
  const cold = await compare(
    'run_code cold start (one run of `return 1`) vs one direct call',
    { name: 'direct ctx.tools.execute(add)', fn: () => ctx.tools.execute({ name: 'add', arguments: { a: 1, b: 2 } }) },
    [{ name: 'run_code `return 1`', fn: () => runCode('return 1') }],
    { iterations: 20, rounds: 9, warmup: 20, unit: 'ms' },
  )
  // The steady state: in a fresh process the first ~15 programs of 200 calls run 3–5× slower, until V8
  // has optimised the per-call functions on both threads (README, Limitations). A running agent has
  // long passed that; with a warm-up of 2 programs instead of 20 this figure read 100–130 µs.
  const nested = await compare(
    `${CALLS} calls: inside one program vs direct`,
    { name: `${CALLS} direct calls`, fn: direct },
    [
      { name: `run_code with ${CALLS} nested calls`, fn: () => runCode(program) },
      { name: 'run_code `return 0` (subtracted)', fn: () => runCode('return 0') },
    ],
    { iterations: 2, rounds: 9, warmup: 20, unit: 'ms' },
  )
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
    cpu.cold.push(
      (await cpuOf(async () => {
        for (let i = 0; i < 20; i++) await runCode('return 1')
      })) / 20,
    )
  }
  const cpuNested = (mid(cpu.nested) - mid(cpu.empty)) / CALLS
  const cpuDirect = mid(cpu.direct) / CALLS
  // Spinning off, for reference (its own warm-up, after the figures above).
  const sleeping = await compare(
    `the same ${CALLS} calls, spinning off`,
    { name: 'run_code `return 0` (subtracted)', fn: () => still.tools.execute({ name: 'run_code', arguments: { code: 'return 0' } }) },
    [{ name: `run_code with ${CALLS} nested calls`, fn: () => still.tools.execute({ name: 'run_code', arguments: { code: program } }) }],
    { iterations: 2, rounds: 9, warmup: 20, unit: 'ms' },
  )
  const perStill = (sleeping[`run_code with ${CALLS} nested calls`] - sleeping['run_code `return 0` (subtracted)']) / CALLS
  console.log(
    [
      '\nSummary',
      `  cold start: ${(cold['run_code `return 1`'] / 1000).toFixed(2)} ms per run (target ≤ 2 ms, never over 5 ms); a direct call ${cold['direct ctx.tools.execute(add)'].toFixed(1)} µs`,
      `  nested call round trip: ${perNested.toFixed(1)} µs vs ${perDirect.toFixed(1)} µs direct → ${(perNested / perDirect).toFixed(2)}× (target ≤ 50 µs, never over 150 µs); spinning off: ${perStill.toFixed(1)} µs`,
      `  CPU time (median of 9): cold start ${(mid(cpu.cold) / 1000).toFixed(2)} ms; nested call ${cpuNested.toFixed(1)} µs vs ${cpuDirect.toFixed(1)} µs direct → ${(cpuNested / cpuDirect).toFixed(2)}×`,
      await workerStart(),
      '  hostile programs, CPU budget 100 ms:',
      await stopLatency(),
    ].join('\n'),
  )
}, 600_000)

// Worker threads would keep the bench process alive.
afterAll(async () => {
  await ctx?.fiber.dispose()
  await still?.fiber.dispose()
  await hostile?.fiber.dispose()
})

describe('code-mode', () => {
  bench(
    'run_code `return 1`',
    async () => {
      await runCode('return 1')
    },
    { iterations: 20, warmupIterations: 5 },
  )
  bench(
    `run_code with ${CALLS} nested calls`,
    async () => {
      await runCode(program)
    },
    { iterations: 3, warmupIterations: 1 },
  )
  bench(`${CALLS} direct calls`, direct, { iterations: 3, warmupIterations: 1 })
})
