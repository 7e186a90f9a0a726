import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool } from '@cordage/core'
import { failureOf, lookup, setup, sleeper, valueOf } from './helpers.js'

type Span = { name: string; id: number; start: number; end: number; aborted: boolean }
const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end

describe('nested dispatch', () => {
  it('completes 1 000 nested calls in one program', async () => {
    const { run, results } = await setup([lookup])
    const value = valueOf(await run('let total = 0; for (let i = 0; i < 1000; i++) total += (await tools.lookup({ id: i })).id; return total'))
    expect(value.result).toBe(499500)
    expect(results.filter((entry) => entry.exec.parent !== undefined)).toHaveLength(1000)
  })

  it('runs several programs at once on the shared WASM module, each in its own runtime', async () => {
    const { run } = await setup([lookup])
    const outcomes = await Promise.all(
      [1, 2, 3, 4].map((n) => run(`globalThis.mine = ${n}; let s = 0; for (let i = 0; i < 50; i++) s += (await tools.lookup({ id: i })).id; return [mine, s]`)),
    )
    expect(outcomes.map((outcome) => valueOf(outcome).result)).toEqual([
      [1, 1225],
      [2, 1225],
      [3, 1225],
      [4, 1225],
    ])
  })

  it('overlaps parallel-safe calls under Promise.all', async () => {
    // `meet` answers only once all three calls are in flight at once (a hang bound otherwise: calls run one
    // after another never meet; calls run together meet at once).
    let arrived = 0
    let met!: () => void
    const meeting = new Promise<void>((resolve) => (met = resolve))
    const meet = defineTool({
      name: 'meet',
      description: 'Waits for the other calls.',
      parameters: Schema.object({ id: Schema.natural().required() }),
      output: {
        schema: Schema.object({ id: Schema.natural().required(), met: Schema.boolean().required() }),
        render: (_a, v) => [{ type: 'text', text: String(v.met) }],
      },
      concurrency: 'parallel',
      async execute(args) {
        if (++arrived === 3) met()
        let timer: NodeJS.Timeout | undefined
        const alone = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, 15_000, false)))
        const together = await Promise.race([meeting.then(() => true), alone])
        clearTimeout(timer)
        return { id: args.id, met: together }
      },
    })
    const { run } = await setup([meet])
    const value = valueOf(await run('return await Promise.all([1, 2, 3].map((id) => tools.meet({ id })))'))
    expect(value.result).toEqual([1, 2, 3].map((id) => ({ id, met: true })))
  })

  it('runs exclusive calls alone, starting every call in submission order', async () => {
    const spans: Span[] = []
    const { run } = await setup([sleeper('nap', 'parallel', spans), sleeper('solo', 'exclusive', spans)])
    valueOf(
      await run(`await Promise.all([
      tools.nap({ id: 1, ms: 40 }), tools.nap({ id: 2, ms: 40 }), tools.solo({ id: 3, ms: 40 }),
      tools.nap({ id: 4, ms: 40 }), tools.solo({ id: 5, ms: 40 }), tools.nap({ id: 6, ms: 40 }),
    ])`),
    )
    const byStart = [...spans].sort((x, y) => x.start - y.start).map((span) => span.id)
    expect(byStart).toEqual([1, 2, 3, 4, 5, 6])
    for (const solo of spans.filter((span) => span.name === 'solo')) {
      for (const other of spans) if (other !== solo) expect(overlaps(solo, other), `${solo.id} overlaps ${other.id}`).toBe(false)
    }
    expect(
      overlaps(
        spans.find((s) => s.id === 1)!,
        spans.find((s) => s.id === 2)!,
      ),
    ).toBe(true)
  })

  it('aborts and drains outstanding calls before run_code returns when the program returns early', async () => {
    const spans: Span[] = []
    const { run } = await setup([sleeper('nap', 'parallel', spans)])
    const value = valueOf(await run('tools.nap({ id: 1, ms: 10000 }); tools.nap({ id: 2, ms: 10000 }); await tools.nap({ id: 3, ms: 1 }); return "early"'))
    expect(value.result).toBe('early')
    // Settled (and recorded) before run_code returned: no call is left running.
    expect(spans.map((span) => [span.id, span.aborted]).sort()).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ])
  })

  it('aborts outstanding calls when the program fails', async () => {
    const spans: Span[] = []
    const { run } = await setup([sleeper('nap', 'parallel', spans)])
    failureOf(await run('tools.nap({ id: 1, ms: 10000 }); await tools.nap({ id: 2, ms: 1 }); throw new Error("stop")'))
    expect(spans.map((span) => [span.id, span.aborted]).sort()).toEqual([
      [1, true],
      [2, false],
    ])
  })

  it('reports ABORTED and aborts nested calls when the caller cancels run_code', async () => {
    const spans: Span[] = []
    const { ctx } = await setup([sleeper('nap', 'parallel', spans)])
    const controller = new AbortController()
    const nestedStarted = new Promise<void>((resolve) =>
      ctx.on('tools/execute', (exec, next) => {
        if (exec.parent !== undefined) resolve()
        return next()
      }),
    )
    const pending = ctx.tools.execute({ name: 'run_code', arguments: { code: 'await tools.nap({ id: 1, ms: 10000 })' }, signal: controller.signal })
    await nestedStarted
    controller.abort()
    const failure = failureOf(await pending)
    expect(failure.code).toBe('ABORTED')
    expect(spans).toMatchObject([{ id: 1, aborted: true }])
  })
})
