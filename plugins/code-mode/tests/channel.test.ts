import { Worker } from 'node:worker_threads'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool } from '@cordage/core'
import { awaitMail, CONTROL_SLOTS, DOORBELL, MAILBOX_BYTES, Spinner, workerWindow } from '../src/channel.js'
import { setup, valueOf } from './helpers.js'

describe('the spin handshake', () => {
  it('delivers every reply exactly once, whichever side wins the race between mailbox and port', async () => {
    const count = 3000
    const control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4))
    const up = new Uint8Array(new SharedArrayBuffer(MAILBOX_BYTES))
    const worker = new Worker(new URL('./channel-race-worker.js', import.meta.url), {
      workerData: { controlBuffer: control.buffer, upBuffer: up.buffer, count },
    })
    const posted: Array<{ seq?: number; handed?: number }> = []
    let wake: (() => void) | undefined
    worker.on('message', (message) => {
      posted.push(message)
      wake?.()
    })
    const next = async (): Promise<{ seq?: number; handed?: number }> => {
      while (!posted.length) await new Promise<void>((resolve) => (wake = resolve))
      return posted.shift()!
    }
    const received: number[] = []
    let viaMailbox = 0
    // Windows of 1–11 µs against answers of 0–12 µs: many spins end just as the worker hands its reply over.
    // A window of 0 (never spins) and one of 100 ms (outlasts any answer) take each path for certain, so
    // both are exercised however busy the machine is.
    const spinners = [1, 3, 5, 7, 9, 11, 0, 100_000].map((micros) => new Spinner(micros))
    for (let seq = 0; seq < count; seq++) {
      Atomics.add(control, DOORBELL, 1)
      Atomics.notify(control, DOORBELL)
      const mail = awaitMail(control, up, spinners[seq % spinners.length]!) as { seq: number } | undefined
      if (mail) viaMailbox++
      received.push((mail ?? (await next())).seq!)
    }
    const summary = await next()
    await worker.terminate()
    expect(received).toEqual(Array.from({ length: count }, (_, seq) => seq))
    expect(posted).toEqual([])
    expect(summary.handed).toBe(viaMailbox)
    // Both paths were exercised, or the test proves nothing about the race.
    expect(viaMailbox).toBeGreaterThan(0)
    expect(viaMailbox).toBeLessThan(count)
  })

  it("spins only while the other side's last answer took at most the window", () => {
    const spinner = new Spinner(250)
    expect(spinner.engage()).toBe(true)
    spinner.took = 251
    expect(spinner.engage()).toBe(false) // a slow tool: the next wait sleeps at once
    spinner.took = 40
    expect(spinner.engage()).toBe(true) // quick again
    const started = performance.now()
    expect(spinner.spin(() => false)).toBe(false)
    expect(performance.now() - started).toBeGreaterThanOrEqual(0.25)
    expect(new Spinner(0).engage()).toBe(false)
  })
})

describe('spinning changes nothing a program sees', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'Returns its text, optionally repeated.',
    parameters: Schema.object({ text: Schema.string().required(), times: Schema.natural().default(1) }),
    output: { schema: Schema.object({ text: Schema.string().required() }), render: (_a, v) => [{ type: 'text', text: v.text }] },
    execute: (args) => ({ text: args.text.repeat(args.times) }),
    concurrency: 'parallel',
  })
  // Replies and completions both above and below the mailbox size (64 KiB), sequential and batched.
  const program = `
    const small = []
    for (let i = 0; i < 50; i++) small.push((await tools.echo({ text: 'é' + i })).text)
    const large = (await tools.echo({ text: 'ü'.repeat(1000), times: 100 })).text
    const batch = await Promise.all([1, 2, 3].map((i) => tools.echo({ text: 'x'.repeat(30000 * i) })))
    let failed
    try { await tools.echo({ text: 1 }) } catch (error) { failed = error.message }
    return { small: small.join(','), large: large.length, batch: batch.map((v) => v.text.length), failed }`

  it('gives the same results with spinning off, short and long', async () => {
    const results = []
    for (const spinMicros of [0, 5, 1000]) {
      const { run } = await setup([echo], { spinMicros })
      results.push(valueOf(await run(program)).result)
    }
    expect(results[0]).toEqual({
      small: Array.from({ length: 50 }, (_, i) => 'é' + i).join(','),
      large: 100_000,
      batch: [30_000, 60_000, 90_000],
      failed: expect.stringMatching(/text/),
    })
    expect(results[1]).toEqual(results[0])
    expect(results[2]).toEqual(results[0])
  })

  it('keeps the event loop turning while a program keeps the host spinning', async () => {
    // Thousands of quick steps, each answered within the spin window, so the host hands replies straight
    // back: timers and direct calls must still be served between the program's steps, not only after it.
    // Asserted by where in the run they were served (a host that never yields serves them at step 0 or
    // at the end); how long they waited is a figure for the benchmark, not a bound for a busy machine.
    let steps = 0
    const step = defineTool({
      name: 'step',
      description: 'Counts a program step.',
      parameters: Schema.object({}),
      output: { schema: Schema.object({ step: Schema.natural().required() }), render: (_a, v) => [{ type: 'text', text: String(v.step) }] },
      execute: () => ({ step: ++steps }),
      concurrency: 'parallel',
    })
    const { ctx, run } = await setup([echo, step], { spinMicros: 1000 })
    // Each step is answered within the spin window; 1 000 of them span hundreds of 5 ms timer periods.
    const STEPS = 1000
    const ticksAt = new Set<number>()
    const ticker = setInterval(() => ticksAt.add(steps), 5)
    const servedAt: number[] = []
    const probe = setInterval(() => void ctx.tools.execute({ name: 'echo', arguments: { text: 'ping' } }).then(() => servedAt.push(steps)), 20)
    const result = valueOf(
      await run(`let n = 0; for (let i = 0; i < ${STEPS}; i++) { for (let j = 0; j < 200; j++) n += j & 1; await tools.step({}) } return n`),
    )
    clearInterval(ticker)
    clearInterval(probe)
    expect(result.result).toBe(STEPS * 100)
    const midRun = (at: number) => at > 0 && at < STEPS
    expect([...ticksAt].filter(midRun).length).toBeGreaterThanOrEqual(5)
    expect(servedAt.filter(midRun).length).toBeGreaterThanOrEqual(3)
  })

  it('lets a worker spin four times as long as the host, at most 1 ms, and never when spinning is off', () => {
    expect([0, 5, 250, 1000].map(workerWindow)).toEqual([0, 20, 1000, 1000])
  })

  it('rejects a spin window outside 0–1000 µs at load', async () => {
    await expect(setup([], { spinMicros: 5000 })).rejects.toThrow(/spinMicros/)
  })
})
