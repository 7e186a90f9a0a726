import { describe, expect, it } from 'vitest'
import type { CodeRunner, CodeSession, CodeSessionOptions } from '@cordage/services'
import { lookup, setup, valueOf } from './helpers.js'

const service = (ctx: { get(name: 'codeMode'): CodeRunner | undefined }): CodeRunner => ctx.get('codeMode')!

async function open(options: CodeSessionOptions = {}, config = {}) {
  const { ctx, run, fiber } = await setup([lookup], config)
  const ended: Error[] = []
  const logs: string[] = []
  const session = await service(ctx).open({ onEnd: (error) => ended.push(error), onLog: (line) => logs.push(line), ...options })
  return { ctx, run, fiber, session, ended, logs }
}

/** How the promise settled: its value, or the error's code, kind and message. */
async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await promise }
  } catch (error) {
    const failure = error as { code?: string; kind?: string; message: string }
    return { code: failure.code, kind: failure.kind, message: failure.message }
  }
}

/** How many times a 5 ms timer fired while `promise` was pending: none when the host's event loop was blocked. */
async function ticksWhile(promise: Promise<unknown>): Promise<number> {
  let ticks = 0
  const timer = setInterval(() => void ticks++, 5)
  try {
    await promise.catch(() => {})
  } finally {
    clearInterval(timer)
  }
  return ticks
}

describe('ctx.codeMode.open: a persistent sandbox', () => {
  it('keeps globals between evaluations, which overlap while they await host functions', async () => {
    const releases: Array<() => void> = []
    const { session, logs } = await open({
      host: {
        'host.wait': () => new Promise((resolve) => releases.push(() => resolve('released'))),
        'host.echo': async (args) => args,
      },
    })
    await session.evaluate('globalThis.count = 0; globalThis.bump = () => ++count')
    const waiting = session.evaluate('const answer = await host.wait({}); return [answer, bump()]')
    expect(await session.evaluate('console.log("hello", { a: 1 }); return [bump(), await host.echo({ b: 2 })]')).toEqual([1, { b: 2 }])
    await new Promise((resolve) => setTimeout(resolve, 10))
    releases.shift()!()
    expect(await waiting).toEqual(['released', 2])
    expect(logs).toEqual(['hello {"a":1}'])
    expect(await session.evaluate('return typeof tools === "object" && Object.keys(tools).length')).toBe(0)
    await session.close()
  })

  it('evaluates a setup first, from a context an idle worker prepared when it can; a setup that fails ends the session', async () => {
    const { ctx } = await open()
    const setup = 'globalThis.greet = (name) => "hello " + name'
    for (let round = 0; round < 3; round++) {
      const session = await service(ctx).open({ setup, host: { 'host.echo': async (args) => args } })
      expect(await session.evaluate('return greet("you")')).toBe('hello you')
      await session.close()
      // Idle time for the worker to prepare the next one.
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (const [bad, message] of [
      ['throw new Error("no setup")', /^the session's setup failed: Error: no setup/],
      ['await host.echo({})', /^the session's setup failed: the setup called a host function/],
    ] as const) {
      const ended: Error[] = []
      const session = await service(ctx).open({ setup: bad, host: { 'host.echo': async (args) => args }, onEnd: (error) => ended.push(error) })
      expect(await outcome(session.evaluate('return 1'))).toMatchObject({ kind: 'runtime', message: expect.stringMatching(message) })
      expect(ended).toHaveLength(1)
    }
  })

  it('fails one evaluation that throws or returns non-JSON, and lives on', async () => {
    const { session, ended } = await open()
    expect(await outcome(session.evaluate('throw new TypeError("nope")'))).toMatchObject({
      code: 'CODE_RUN_FAILED',
      kind: 'runtime',
      message: expect.stringMatching(/^TypeError: nope\n/),
    })
    expect(await outcome(session.evaluate('return () => 1'))).toMatchObject({ kind: 'runtime', message: expect.stringContaining('$: a function is not JSON') })
    expect(await outcome(session.evaluate('const a = 1\nfoo(;\nreturn a'))).toMatchObject({
      kind: 'runtime',
      message: expect.stringMatching(/^SyntaxError: .*\n\s+at session\.js:2:5/),
    })
    expect(await outcome(session.evaluate('const n: number = 1', { file: 'mount.js' }))).toMatchObject({
      message: expect.stringMatching(/^SyntaxError: .*\n\s+at mount\.js:1:8/),
    })
    expect(await session.evaluate('return 2')).toBe(2)
    expect(ended).toEqual([])
    await session.close()
  })

  it('times out an evaluation that never settles, and lives on', async () => {
    const { session } = await open()
    expect(await outcome(session.evaluate('await new Promise(() => {})', { timeoutMs: 50 }))).toMatchObject({ kind: 'timeout' })
    expect(await session.evaluate('return 3')).toBe(3)
    await session.close()
  })

  it.each([
    ['a busy loop', 'for (;;) {}'],
    ['a busy loop that catches', 'for (;;) { try { for (;;) {} } catch {} }'],
    ['a promise-job flood', 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})'],
  ])('ends the session on %s past its step budget, while the host keeps answering', async (_label, code) => {
    const { session, ended, run } = await open({ stepCpuMs: 100 })
    const attack = outcome(session.evaluate(code))
    // The step runs for its whole 100 ms CPU budget: the host's timers keep firing meanwhile.
    const ticks = await ticksWhile(attack)
    expect(await attack).toMatchObject({ code: 'CODE_RUN_FAILED', kind: 'cpu' })
    expect(ended).toHaveLength(1)
    expect(ticks).toBeGreaterThanOrEqual(3)
    expect(session.ended).toBe(true)
    expect(await outcome(session.evaluate('return 1'))).toMatchObject({ kind: 'cpu' })
    // The pool still runs programs.
    expect(valueOf(await run('return 5')).result).toBe(5)
  })

  it('lives through thousands of short evaluations: only time inside a step counts against its budget', async () => {
    // QuickJS polls its interrupt handler every few thousand operations; one landing in the worker's own
    // brief call into the VM between steps once read as the whole time since 1970, ending the session.
    const { session, ended } = await open()
    for (let index = 0; index < 4000; index++) expect(await session.evaluate(`return ${index}`)).toBe(index)
    expect(ended).toEqual([])
    await session.close()
  })

  it.each([
    ['throws', "throw new Error('species')", { kind: 'runtime', message: expect.stringMatching(/^Error: species/) }],
    ['spins', 'for (;;) {}', { kind: 'cpu' }],
  ])('meters and reports a promise-constructor getter that %s when the host watches an evaluation', async (label, body, expected) => {
    // Watching an evaluation's promise reads its `constructor` (Promise species): that runs the code's getter.
    const { session, ended } = await open({ stepCpuMs: 200 })
    const patched = outcome(session.evaluate(`Object.defineProperty(Promise.prototype, 'constructor', { get() { ${body} } }); return 1`))
    expect(await patched).toMatchObject(expected)
    if (label === 'throws') {
      // The code broke only its own evaluations: the session lives on.
      expect(ended).toEqual([])
      expect(await outcome(session.evaluate('return 2'))).toMatchObject({ kind: 'runtime' })
      expect(session.ended).toBe(false)
      await session.close()
    } else expect(ended).toHaveLength(1)
  })

  it('ends the session when the code exhausts the heap', async () => {
    const { session, ended } = await open({ stepCpuMs: 60_000 }, { memoryBytes: 2 << 20 })
    expect(await outcome(session.evaluate('const hoard = []; for (;;) hoard.push([hoard.length, {}])'))).toMatchObject({ kind: 'memory' })
    expect(ended.map((error) => (error as { kind?: string }).kind)).toEqual(['memory'])
  })

  it('close() rejects pending evaluations, stops a busy worker, and gives the pool back', async () => {
    const { session, ended, run } = await open({ stepCpuMs: 60_000 })
    const idle = outcome(session.evaluate('await new Promise(() => {})'))
    await session.close()
    expect(await idle).toMatchObject({ kind: 'aborted' })
    expect(ended).toEqual([])
    let spinningStarted!: () => void
    const started = new Promise<void>((resolve) => (spinningStarted = resolve))
    const { session: busy } = await open({ stepCpuMs: 60_000, host: { 'host.started': async () => (spinningStarted(), null) } })
    const spinning = outcome(busy.evaluate('await host.started({}); for (;;) {}'))
    await started
    // With a minute of CPU budget only close() can end the step within the test's time; the bound below
    // is a hang bound (close takes milliseconds), not a timing.
    const closing = performance.now()
    await busy.close()
    expect(performance.now() - closing).toBeLessThan(10_000)
    expect(await spinning).toMatchObject({ kind: 'aborted' })
    expect(valueOf(await run('return 6')).result).toBe(6)
  })

  it('ends every session, telling its owner, when the plugin is unloaded', async () => {
    const { session, ended, fiber } = await open()
    const pending = outcome(session.evaluate('await new Promise(() => {})'))
    await fiber.dispose()
    expect(await pending).toMatchObject({ kind: 'aborted' })
    expect(ended).toHaveLength(1)
  })

  it('bounds what is in flight', async () => {
    let session: CodeSession
    ;({ session } = await open({ host: { 'host.never': () => new Promise(() => {}) } }))
    const many = Array.from({ length: 256 }, () => session.evaluate('await new Promise(() => {})').catch(() => {}))
    expect(await outcome(session.evaluate('return 1'))).toMatchObject({ kind: 'calls' })
    void many
    const calls = await open({ host: { 'host.never': () => new Promise(() => {}) } })
    const flood = outcome(
      calls.session.evaluate(
        'const all = []; for (let i = 0; i < 1100; i++) all.push(host.never({}).catch((e) => e.message)); return (await Promise.race(all))',
      ),
    )
    expect(await flood).toMatchObject({ value: expect.stringContaining('already waits for 1024 host calls') })
  })
})
