import Schema from 'schemastery'
import { afterEach, describe, expect, it } from 'vitest'
import { newQuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Catalog } from '../src/catalog.js'
import { openLane } from '../src/lane.js'
import { SandboxPool } from '../src/pool.js'
import prelude from '../src/prelude.js'
import { CodeModeRunner } from '../src/service.js'
import { lookup } from './helpers.js'

/** A sandbox as the worker builds it (fresh runtime, prelude evaluated), on this thread. */
async function sandbox() {
  const quickjs = await newQuickJSWASMModule(RELEASE_SYNC)
  const runtime = quickjs.newRuntime()
  const context = runtime.newContext()
  const host = context.newFunction('host', () => {})
  const setup = context.unwrapResult(context.evalCode(`(${prelude.toString()})`))
  const list = context.unwrapResult(context.callFunction(setup, context.undefined, host))
  const helpers = [0, 1, 2, 3, 4, 5].map((index) => context.getProp(list, index))
  const dispose = () => {
    for (const handle of [...helpers, list, setup, host]) handle.dispose()
    context.dispose()
    runtime.dispose()
  }
  const liveAllocations = () => runtime.computeMemoryUsage().consume((usage) => context.dump(usage).malloc_count as number)
  let interrupt = false
  runtime.setInterruptHandler(() => interrupt)
  const interrupting = (on: boolean) => void (interrupt = on)
  return { runtime, context, helpers, dispose, liveAllocations, interrupting }
}

describe('the raw lane into the VM', () => {
  it('runs a program of 2 000 calls and leaves no VM allocation behind', async () => {
    const box = await sandbox()
    const lane = openLane(box)
    expect(lane.raw).toBe(true)
    const { context, helpers } = box
    const names = [context.newString('["add"]'), context.newString('[]')]
    context.unwrapResult(context.callFunction(helpers[0]!, context.undefined, ...names)).dispose()
    for (const handle of names) handle.dispose()
    const main = context.unwrapResult(
      context.evalCode(`(async () => { let s = 0; for (let i = 0; i < 2000; i++) s += (await tools.add({ a: i })).sum; return s })()`),
    )
    context.unwrapResult(context.callFunction(helpers[5]!, context.undefined, main)).dispose()
    main.dispose()
    let calls = 0
    let before = 0
    for (;;) {
      expect(lane.jobs()).toBeUndefined()
      const batch = lane.drain()
      if (typeof batch !== 'string') throw new Error(batch.problem)
      if (batch[0] !== '0') break
      const [id, , args] = batch.slice(1).split('\n')
      if (++calls === 10) before = box.liveAllocations()
      expect(lane.settle(`${id}\n1{"sum":${JSON.parse(args!).a}}`)).toBeUndefined()
    }
    expect(calls).toBe(2000)
    const result = context.unwrapResult(context.callFunction(helpers[2]!, context.undefined))
    expect(result.consume((handle) => context.getString(handle))).toBe(String((1999 * 2000) / 2))
    // Every string, result and error the lane created was freed: the VM holds as many blocks as after 10 calls.
    expect(box.liveAllocations()).toBeLessThanOrEqual(before)
    lane.close()
    box.dispose()
  })

  it('describes what the VM throws (here: an interrupt in each crossing) as the public API does', async () => {
    const box = await sandbox()
    const described: Record<string, string[]> = {}
    for (const lane of [openLane(box), openLane(box, false)]) {
      const seen: string[] = (described[String(lane.raw)] = [])
      box.interrupting(true)
      // QuickJS polls its interrupt handler every few thousand steps: repeat a crossing until it lands. Where it
      // lands (at a function's entry or inside it) decides whether the error has a stack: compare first lines.
      let thrown: string | undefined
      for (let i = 0; i < 50_000 && thrown === undefined; i++) thrown = lane.settle('404\n1{}')
      seen.push(String(thrown).split('\n')[0]!)
      let drained: string | { problem: string } = ''
      for (let i = 0; i < 50_000 && typeof drained === 'string'; i++) drained = lane.drain()
      seen.push((typeof drained === 'string' ? drained : drained.problem).split('\n')[0]!)
      box.interrupting(false)
      expect(lane.jobs()).toBeUndefined()
      expect(lane.drain()).toBe('0')
      lane.close()
    }
    expect(described.true).toEqual(described.false)
    expect(described.true).toEqual(['InternalError: interrupted', 'InternalError: interrupted'])
    box.dispose()
  })
})

describe('raw and public-API lanes', () => {
  const pools: SandboxPool[] = []
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.dispose()))
  })

  it('give the same results, logs and failures', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(lookup)
    ctx.tools.register(
      defineTool({
        name: 'fails',
        description: 'Always fails.',
        parameters: Schema.object({}),
        output: { schema: Schema.object({}), render: () => [] },
        execute: () => {
          throw new Error('no luck')
        },
      }),
    )
    const registry = ctx.tools
    const catalog = new Catalog(registry, new Set())
    const access = {
      execute: registry.execute,
      isParallel: (name: string, args: any) => catalog.isParallel(name, args),
      catalog: () => catalog.current(),
      describe: (name: any) => catalog.describe(name),
    }
    const limits = { memoryBytes: 32 << 20, stackBytes: 256 << 10, cpuTimeMs: 300, timeoutMs: 10_000, maxOutputBytes: 65_536, maxCalls: 5000 }
    const programs = [
      'let n = 0; for (let i = 1; i <= 100; i++) n += (await tools.lookup({ id: i })).id; console.log("sum", n); return n',
      'const all = await Promise.all([1, 2, 3].map((id) => tools.lookup({ id }))); return all.map((u) => u.name)',
      'try { await tools.fails({}) } catch (e) { return [e.name, e.toolName, e.message, e.code, e.info ?? null] }',
      "const doc = await describeTool('lookup'); try { await describeTool('nope') } catch (e) { return [doc.split('\\n')[3], e.code] }",
      'const u = await tools.lookup({ id: 1 }); try { u.name = "x" } catch (e) { return [Object.isFrozen(u), e.name] }',
      'await tools.lookup({ id: 1 }); throw new RangeError("after a call")',
      'await tools.lookup({ id: 1 }); for (;;) {}',
    ]
    const outcomes: unknown[][] = []
    for (const raw of [true, false]) {
      const pool = new SandboxPool(1, limits, 250, raw)
      pools.push(pool)
      const runner = new CodeModeRunner(pool, access, limits)
      const results: unknown[] = []
      for (const code of programs) {
        results.push(
          await runner.run({ code }).then(
            (output) => ({ output }),
            (error) => ({ code: error.code, kind: error.kind, message: error.message.split('\n')[0] }),
          ),
        )
      }
      outcomes.push(results)
    }
    expect(outcomes[0]).toEqual(outcomes[1])
    expect(outcomes[0]).toMatchObject([
      { output: { result: 5050, logs: ['sum 5050'] } },
      { output: { result: ['user-1', 'user-2', 'user-3'] } },
      { output: { result: ['ToolCallError', 'fails', expect.stringMatching(/no luck/), 'TOOL_FAILED', null] } },
      { output: { result: ['tools.lookup(args: {', 'UNKNOWN_TOOL'] } },
      { output: { result: [true, 'TypeError'] } },
      { code: 'CODE_RUN_FAILED', kind: 'runtime', message: expect.stringMatching(/RangeError: after a call/) },
      { code: 'CODE_RUN_FAILED', kind: 'cpu' },
    ])
    await ctx.fiber.dispose()
  })
})
