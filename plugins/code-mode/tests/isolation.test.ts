import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { failureOf, lookup, setup, sleeper, valueOf } from './helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
const MB = 1 << 20

/** Resident set size after two full collections (worker threads included: they live in this process). */
async function settledRss(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return process.memoryUsage().rss
}

/**
 * Calls `lookup` directly and lists tools every 10 ms until `done` settles; returns how many answers came
 * back while it was still running (a host blocked behind the program answers only after it).
 */
async function probeWhile(ctx: Awaited<ReturnType<typeof setup>>['ctx'], done: Promise<unknown>): Promise<{ answeredDuring: number }> {
  const state = { finished: false }
  void done.finally(() => (state.finished = true))
  let answeredDuring = 0
  while (!state.finished) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    const result = await ctx.tools.execute({ name: 'lookup', arguments: { id: 1 } })
    expect(ctx.tools.list().some((tool) => tool.name === 'run_code')).toBe(true)
    expect(result.isError).toBe(false)
    if (!state.finished) answeredDuring++
  }
  return { answeredDuring }
}

const written: string[] = []
const write = defineTool({
  name: 'write',
  description: 'Records a write.',
  parameters: Schema.object({ path: Schema.string().required() }),
  output: { schema: Schema.object({ path: Schema.string().required() }), render: (_a, v) => [{ type: 'text', text: v.path }] },
  execute: (args) => (written.push(args.path), { path: args.path }),
})

// The programs of the isolation report, each with the limits it was reported under (CPU budgets cut
// to keep the suite short) and the kind it must now end with.
const attacks: Array<{ name: string; code: string; config: Record<string, number>; kind: RegExp }> = [
  {
    name: 'a hoard of 1 MB strings under an 8 MiB cap',
    code: 'const a=[]; for(let i=0;i<100;i++) a.push("y".repeat(1e6)+i); return a.length',
    config: { memoryBytes: 8 * MB },
    kind: /^memory$/,
  },
  { name: 'an unbounded hoard under the default cap', code: 'const a=[]; for(;;) a.push("y".repeat(1e6)+a.length)', config: {}, kind: /^memory$/ },
  {
    name: 'a microtask flood',
    code: 'for (let i=0;i<10000;i++) (function loop(){ Promise.resolve().then(loop) })(); await new Promise(()=>{})',
    config: { cpuTimeMs: 300 },
    kind: /^cpu$/,
  },
  {
    name: 'a doubling microtask flood',
    code: 'const f=()=>Promise.resolve().then(()=>{f();f()}); f(); await new Promise(()=>{})',
    config: { cpuTimeMs: 300 },
    kind: /^(cpu|memory)$/,
  },
  {
    name: 'a linear promise chain',
    code: '(function loop(){ Promise.resolve().then(loop) })(); await new Promise(()=>{})',
    config: { cpuTimeMs: 300 },
    kind: /^cpu$/,
  },
  { name: 'a long built-in call', code: 'let n = 0; for (;;) n += "x".repeat(3e7).length', config: { cpuTimeMs: 100, memoryBytes: 64 * MB }, kind: /^cpu$/ },
]

describe('hostile programs end with a coded failure and leave the host responsive', () => {
  it.each(attacks)('$name', async ({ code, config, kind }) => {
    const { ctx, run } = await setup([lookup], { timeoutMs: 20_000, ...config })
    valueOf(await run('return 1'))
    const before = await settledRss()
    const attack = run(`console.log("started"); ${code}`)
    const { answeredDuring } = await probeWhile(ctx, attack)
    const failure = failureOf(await attack)
    expect(failure.code).toBe('CODE_RUN_FAILED')
    expect(failure.message).toMatch(/^run_code failed \((\w+)\)/)
    const ended = failure.message.match(/^run_code failed \((\w+)\)/)![1]!
    expect(ended).toMatch(kind)
    expect(failure.message).toMatch(/Logs before the failure:\nstarted/)
    // A program stopped for CPU ran for its whole budget, and direct calls were answered meanwhile rather
    // than after the run; how quickly is the benchmark's figure. A memory hoard may end before the first probe.
    if (ended === 'cpu') expect(answeredDuring).toBeGreaterThanOrEqual(3)
    // The pool is usable again (a terminated worker is replaced) and the memory went back.
    expect(valueOf(await run('return (await tools.lookup({ id: 2 })).id')).result).toBe(2)
    expect((await settledRss()) - before).toBeLessThan(50 * MB)
  })

  it.each(attacks.filter((attack) => attack.name !== 'a hoard of 1 MB strings under an 8 MiB cap'))('cancelling $name ends it', async ({ code, config }) => {
    const { ctx, results } = await setup([lookup], { ...config, cpuTimeMs: 60_000, timeoutMs: 60_000 })
    const controller = new AbortController()
    // The program calls lookup before its attack: the abort comes once the attack is under way.
    const attack = ctx.tools.execute({ name: 'run_code', arguments: { code: `await tools.lookup({ id: 1 }); ${code}` }, signal: controller.signal })
    await expect.poll(() => results.some((entry) => entry.exec.name === 'lookup'), { timeout: 20_000, interval: 5 }).toBe(true)
    controller.abort()
    // With a minute of CPU and wall budget, only the cancellation can end it within the test's time; how
    // soon after the abort it returns is measured in code-mode.bench.ts.
    const failure = failureOf(await attack)
    // ABORTED, unless the program had already hit its memory cap on its own.
    expect(failure.code).toMatch(/^(ABORTED|CODE_RUN_FAILED)$/)
    if (failure.code === 'CODE_RUN_FAILED') expect(failure.message).toMatch(/^run_code failed \(memory\)/)
  })
})

describe('calls after the program settled', () => {
  it('never starts a call queued in the same job batch as the return', async () => {
    written.length = 0
    const { run, results } = await setup([write])
    const value = valueOf(await run("(async()=>{await null;await null;await tools.write({ path: 'late.txt' })})(); return 'done'"))
    expect(value.result).toBe('done')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(written).toEqual([])
    expect(results.filter((entry) => entry.exec.name === 'write')).toEqual([])
  })

  it('aborts and drains a running call when a stuck worker is terminated mid-call', async () => {
    const spans: Array<{ id: number; aborted: boolean; end: number }> = []
    const { run } = await setup([sleeper('nap', 'parallel', spans as any)], { cpuTimeMs: 200 })
    const failure = failureOf(
      await run(
        'tools.nap({ id: 1, ms: 10000 }); await tools.nap({ id: 2, ms: 1 }); (function loop(){ Promise.resolve().then(loop) })(); await new Promise(()=>{})',
      ),
    )
    expect(failure.message).toMatch(/^run_code failed \(cpu\)/)
    expect(spans.map((span) => [span.id, span.aborted]).sort()).toEqual([
      [1, true],
      [2, false],
    ])
  })

  it('aborts a running call and ends the run ABORTED when the plugin is unloaded', async () => {
    const spans: Array<{ id: number; aborted: boolean }> = []
    const { ctx, fiber } = await setup([sleeper('nap', 'parallel', spans as any)])
    const started = new Promise<void>((resolve) => ctx.on('tools/execute', (exec, next) => (exec.parent !== undefined && resolve(), next())))
    const pending = ctx.tools.execute({ name: 'run_code', arguments: { code: 'await tools.nap({ id: 1, ms: 10000 })' } })
    await started
    await fiber.dispose()
    expect(failureOf(await pending).code).toBe('ABORTED')
    expect(spans).toMatchObject([{ id: 1, aborted: true }])
  })
})

describe('the warm pool', () => {
  it('runs 1 000 programs in a row without growing memory or open handles', async () => {
    const { run, results } = await setup([lookup], { poolSize: 2 })
    for (let i = 0; i < 300; i++) valueOf(await run(`return ${i}`))
    results.length = 0
    const handles = process.getActiveResourcesInfo().length
    const rss = await settledRss()
    const heap = process.memoryUsage().heapUsed
    for (let i = 0; i < 1000; i++) {
      const value = valueOf(await run(`globalThis.seen = (globalThis.seen ?? 0) + 1; return [seen, (await tools.lookup({ id: ${i} })).id]`))
      expect(value.result).toEqual([1, i])
    }
    results.length = 0
    // Retained runs would show in this thread's heap; RSS (worker threads included) moves ±15 MB with
    // V8's own code and allocator pages even for a flat workload, hence the wider bound there.
    expect((await settledRss()) - rss).toBeLessThan(32 * MB)
    expect(process.memoryUsage().heapUsed - heap).toBeLessThan(2 * MB)
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(handles)
  }, 60_000)
})
