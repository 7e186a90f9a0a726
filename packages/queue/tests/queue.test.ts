import { AsyncLocalStorage } from 'node:async_hooks'
import { createRequire } from 'node:module'
import type { Context, ContextManager, TextMapPropagator } from '@opentelemetry/api'
import { afterEach, describe, expect, it } from 'vitest'
import { CordageError } from '@cordage/core'
import { assertRunId, isWorkerIdentity, resolveQueueSettings, type WorkerIdentity } from '../src/types.js'
import { RunQueue } from '../src/queue.js'
import { injectTrace, withTrace } from '../src/trace.js'
import { RunWorker, type RunContext } from '../src/worker.js'

const redis = process.env.CORDAGE_TEST_REDIS_URL
// The copy of the API the queue loads (its CommonJS build), whose globals an SDK would register.
const entry = createRequire(import.meta.url).resolve('@opentelemetry/api')
const { context, createContextKey, propagation, ROOT_CONTEXT } = createRequire(import.meta.url)(
  `${entry.slice(0, entry.lastIndexOf('/build/'))}/build/src/index.js`,
) as typeof import('@opentelemetry/api')

describe('settings and run ids', () => {
  it('applies the defaults and names the key of a bad value', () => {
    expect(resolveQueueSettings({ redis: 'redis://127.0.0.1:6379' })).toEqual({
      redis: 'redis://127.0.0.1:6379',
      name: 'cordage-runs',
      attempts: 3,
      lockDuration: 30_000,
      stalledInterval: 30_000,
    })
    expect(() => resolveQueueSettings({ redis: 'postgres://x' })).toThrow(/queue: redis: expected a redis:\/\//)
    expect(() => resolveQueueSettings({ redis: 'redis://x', name: 'a:b' })).toThrow(/queue: name/)
    expect(() => resolveQueueSettings({ redis: 'redis://x', lockDuration: -1 })).toThrow(/queue: lockDuration: expected a positive integer/)
  })

  it('tells a worker identity from hand-written job data', () => {
    const identity = { host: 'h', pid: 42, start: 7, token: 'wabc1' }
    expect(isWorkerIdentity(identity)).toBe(true)
    for (const bad of [
      null,
      'x',
      { ...identity, pid: 0 },
      { ...identity, start: -1 },
      { ...identity, token: 'a:b' },
      { ...identity, host: 1 },
      { host: 'h', pid: 1 },
    ])
      expect(isWorkerIdentity(bad), JSON.stringify(bad)).toBe(false)
  })

  it('refuses run ids BullMQ cannot take (a colon, digits only)', () => {
    for (const id of ['a:b', '12345', '', '..', 'x'.repeat(129)]) expect(() => assertRunId(id), id).toThrow(expect.objectContaining({ code: 'INVALID_RUN' }))
    expect(() => assertRunId('20261204-181851-d21618')).not.toThrow()
  })

  it("refuses a run id that is another run's resume job id: that run's answer would resume nothing", () => {
    // `resume('fix', 5)` adds job `fix.resume-5`; a run under that id would make it a no-op.
    expect(() => assertRunId('fix.resume-5')).toThrow(expect.objectContaining({ code: 'INVALID_RUN' }))
    expect(() => assertRunId('fix.resume-notes')).not.toThrow()
  })
})

describe('trace context', () => {
  const key = createContextKey('test trace')
  const propagator: TextMapPropagator = {
    inject: (ctx, carrier: Record<string, string>) => void (ctx.getValue(key) && (carrier.traceparent = String(ctx.getValue(key)))),
    extract: (ctx, carrier: Record<string, string>) => (carrier.traceparent ? ctx.setValue(key, carrier.traceparent) : ctx),
    fields: () => ['traceparent'],
  }
  // What an OpenTelemetry SDK registers: a context manager on AsyncLocalStorage.
  const storage = new AsyncLocalStorage<Context>()
  const manager: ContextManager = {
    active: () => storage.getStore() ?? ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => storage.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable: () => manager,
    disable: () => manager,
  }
  afterEach(() => {
    propagation.disable()
    context.disable()
  })

  it("carries the enqueuer's context into the job and runs the job inside it", () => {
    expect(injectTrace()).toEqual({})
    context.setGlobalContextManager(manager)
    propagation.setGlobalPropagator(propagator)
    const carrier = context.with(ROOT_CONTEXT.setValue(key, '00-trace-span-01'), () => injectTrace())
    expect(carrier).toEqual({ traceparent: '00-trace-span-01' })
    expect(withTrace(carrier, () => context.active().getValue(key))).toBe('00-trace-span-01')
  })
})

describe.skipIf(!redis)('on a real Redis (needs CORDAGE_TEST_REDIS_URL)', () => {
  const closers: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close()
  })
  const setup = (options: { attempts?: number; execute: (run: RunContext) => Promise<void>; onFailed?: (id: string, reason: string) => Promise<void> }) => {
    const settings = {
      redis: redis!,
      name: `test-queue-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      lockDuration: 1000,
      stalledInterval: 500,
      attempts: options.attempts,
    }
    const queue = new RunQueue(settings)
    const worker = new RunWorker(settings, { execute: options.execute, onFailed: options.onFailed })
    closers.push(async () => {
      await worker.close(0)
      await queue.obliterate()
      await queue.close()
    })
    return { queue, worker, settings }
  }

  it('closes every Redis connection it opened: a closed worker and queue leave no client of theirs on the server', async () => {
    const { Redis } = await import('ioredis')
    const admin = new Redis(redis!)
    const name = `test-queue-${process.pid}-${Math.random().toString(16).slice(2, 8)}`
    const queue = new RunQueue({ redis: redis!, name })
    const worker = new RunWorker({ redis: redis!, name }, { execute: async () => {} })
    // Ours are named `cordage:<queue>:<role>`; BullMQ names its blocking duplicate after the queue too.
    const clients = async () =>
      String(await admin.client('LIST'))
        .split('\n')
        .map((line) => /\bname=(\S*)/.exec(line)?.[1] ?? '')
        .filter((client) => client.startsWith(`cordage:${name}:`))
        .sort()
    try {
      await worker.ready()
      await queue.state('none')
      // Following a run's text opens the queue's subscriber connection.
      const unfollow = queue.followText('run-x', () => {})
      await expect
        .poll(clients, { timeout: 10_000, interval: 20 })
        .toEqual([`cordage:${name}:control`, `cordage:${name}:enqueuer`, `cordage:${name}:jobs`, `cordage:${name}:live`, `cordage:${name}:worker`])
      unfollow()
      await worker.close(0)
      await queue.obliterate()
      await queue.close()
      // The server drops a client once its QUIT is read: waited for under a 10 s hang bound.
      await expect.poll(clients, { timeout: 10_000, interval: 20 }).toEqual([])
    } finally {
      await worker.close(0)
      await queue.close()
      admin.disconnect()
    }
  })

  it("streams a run's text to its followers: the turn so far to one joining mid-turn, then each piece once, a new turn afresh", async () => {
    let step!: (action: (live: RunContext['live']) => void) => Promise<void>
    let finish!: () => void
    const { queue, worker } = setup({
      execute: ({ live }) =>
        new Promise<void>((resolve) => {
          finish = resolve
          step = async (action) => action(live)
        }),
    })
    await worker.ready()
    await queue.enqueue({ id: 'run-text', prompt: 'x' })
    while (!worker.running.includes('run-text')) await new Promise((resolve) => setTimeout(resolve, 10))
    const early: string[] = []
    const late: string[] = []
    const unfollowEarly = queue.followText('run-text', (text) => early.push(text))
    await step((live) => (live.delta('Hel'), live.delta('lo, ')))
    await expect.poll(() => early.join(''), { timeout: 10_000, interval: 10 }).toBe('Hello, ')
    // Joining mid-turn: the text so far, as one piece.
    const unfollowLate = queue.followText('run-text', (text) => late.push(text))
    await expect.poll(() => late, { timeout: 10_000, interval: 10 }).toEqual(['Hello, '])
    await step((live) => live.delta('world'))
    await expect.poll(() => [early.join(''), late.join('')], { timeout: 10_000, interval: 10 }).toEqual(['Hello, world', 'Hello, world'])
    // A follower that only joins now reads the so-far text from Redis (no follower shares it any more).
    unfollowEarly()
    unfollowLate()
    const fresh: string[] = []
    const unfollowFresh = queue.followText('run-text', (text) => fresh.push(text))
    await expect.poll(() => fresh, { timeout: 10_000, interval: 10 }).toEqual(['Hello, world'])
    await step((live) => (live.nextTurn(), live.delta('Next turn.')))
    await expect.poll(() => fresh, { timeout: 10_000, interval: 10 }).toEqual(['Hello, world', 'Next turn.'])
    unfollowFresh()
    finish()
    // The run is over: its text is gone from Redis, and a late follower gets nothing.
    await expect.poll(() => worker.running.includes('run-text'), { timeout: 10_000, interval: 10 }).toBe(false)
    const after: string[] = []
    const unfollowAfter = queue.followText('run-text', (text) => after.push(text))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(after).toEqual([])
    unfollowAfter()
  })

  /** A worker holding run `id` whose `live` the test drives; `finish` ends the run. */
  const streamingRun = async (id: string) => {
    let live: RunContext['live'] | undefined
    let finish!: () => void
    const { queue, worker, settings } = setup({
      execute: (run) =>
        new Promise<void>((resolve) => {
          live = run.live
          finish = resolve
          run.signal.addEventListener('abort', () => resolve(), { once: true })
        }),
    })
    await worker.ready()
    await queue.enqueue({ id, prompt: 'x' })
    await expect.poll(() => live !== undefined, { timeout: 10_000, interval: 10 }).toBe(true)
    return { queue, name: settings.name, live: live!, finish }
  }

  it("catches a follower up on the turn's text after it missed pieces (its Redis connection dropped), instead of going silent until the next turn", async () => {
    const { Redis } = await import('ioredis')
    const { queue, name, live, finish } = await streamingRun('run-gap')
    const channel = `cordage:${name}:live:run-gap`
    const admin = new Redis(redis!)
    const listener = new Redis(redis!)
    closers.push(async () => (admin.disconnect(), listener.disconnect()))
    const published: string[] = []
    listener.on('message', (_channel: string, message: string) => published.push(JSON.parse(message).text))
    await listener.subscribe(channel)
    const followed: string[] = []
    queue.followText('run-gap', (text) => followed.push(text))
    const subscribers = async () => ((await admin.pubsub('NUMSUB', channel)) as [string, number])[1]
    await expect.poll(subscribers, { timeout: 10_000, interval: 10 }).toBe(2)
    live.delta('before ')
    await expect.poll(() => followed.join(''), { timeout: 10_000, interval: 10 }).toBe('before ')
    let text = 'before '
    // Until a piece is published while only the test's own listener is subscribed (the follower reconnects within ~50 ms).
    for (let attempt = 0; ; attempt++) {
      const clients = String(await admin.client('LIST')).split('\n')
      const follower = clients.find((line) => line.includes(` name=cordage:${name}:live `))
      await admin.client('KILL', 'ID', /\bid=(\d+)/.exec(follower!)![1]!)
      const piece = `missed-${attempt} `
      live.delta(piece)
      text += piece
      await expect.poll(() => published.at(-1), { timeout: 10_000, interval: 2 }).toBe(piece)
      if ((await subscribers()) === 1) break
      expect(attempt, 'the follower resubscribed before every piece was published').toBeLessThan(10)
    }
    await expect.poll(subscribers, { timeout: 10_000, interval: 10 }).toBe(2)
    live.delta('after')
    await expect.poll(() => followed.join(''), { timeout: 10_000, interval: 10 }).toBe(`${text}after`)
    finish()
  })

  it('gives a follower that joins after a turn ended none of its text, whether it reads Redis or shares a follower of that turn', async () => {
    const { Redis } = await import('ioredis')
    const { queue, name, live, finish } = await streamingRun('run-turns')
    const other = new RunQueue(queue.settings)
    const admin = new Redis(redis!)
    closers.push(async () => (await other.close(), admin.disconnect()))
    const first: string[] = []
    queue.followText('run-turns', (text) => first.push(text))
    live.delta('Turn one.')
    await expect.poll(() => first, { timeout: 10_000, interval: 10 }).toEqual(['Turn one.'])
    // The turn is stored: what follows it is the next turn's. Followers learn so over pub/sub, a moment later.
    live.nextTurn()
    await expect.poll(() => admin.exists(`cordage:${name}:turn-text:run-turns`), { timeout: 10_000, interval: 10 }).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const sharing: string[] = []
    const reading: string[] = []
    queue.followText('run-turns', (text) => sharing.push(text))
    other.followText('run-turns', (text) => reading.push(text))
    live.delta('Turn two.')
    await expect.poll(() => [sharing, reading], { timeout: 10_000, interval: 10 }).toEqual([['Turn two.'], ['Turn two.']])
    expect(first).toEqual(['Turn one.', 'Turn two.'])
    finish()
  })

  it('writes a long turn to Redis about once: each flush adds its piece to the text so far, not the whole text again', async () => {
    const { Redis } = await import('ioredis')
    const { queue, name, live, finish } = await streamingRun('run-long')
    const key = `cordage:${name}:turn-text:run-long`
    const monitor = await new Redis(redis!).monitor()
    closers.push(async () => void monitor.disconnect())
    let written = 0
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[1] === key) written += args.slice(2).reduce((sum, arg) => sum + arg.length, 0)
    })
    const followed: string[] = []
    queue.followText('run-long', (text) => followed.push(text))
    const piece = 'x'.repeat(999) + '\n'
    // Each piece its own flush: the next is written once the follower has the last.
    for (let count = 1; count <= 100; count++) {
      live.delta(piece)
      await expect.poll(() => followed.join('').length, { timeout: 10_000, interval: 5 }).toBe(count * piece.length)
    }
    const length = 100 * piece.length
    // Monitored commands arrive after they run: the last write has been seen once the key holds the whole turn.
    await expect.poll(() => written, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(length)
    expect(written).toBeLessThan(1.5 * length)
    // Characters of two, three and four bytes in UTF-8 (the last of two UTF-16 units) go where they belong.
    const wide = ['ü€🙂', '€🙂ü', '🙂ü€']
    for (const [index, text] of wide.entries()) {
      live.delta(text)
      await expect.poll(() => followed.join('').length, { timeout: 10_000, interval: 5 }).toBe(length + (index + 1) * text.length)
    }
    // Joining now, from another queue: the whole turn so far, as Redis holds it.
    const late = new RunQueue(queue.settings)
    closers.push(() => late.close())
    const joined: string[] = []
    late.followText('run-long', (text) => joined.push(text))
    await expect.poll(() => joined, { timeout: 10_000, interval: 10 }).toEqual([piece.repeat(100) + wide.join('')])
    finish()
  })

  it("keeps streaming a run's text to a follower when another worker resumes it (it numbers its turns afresh)", async () => {
    const settings = {
      redis: redis!,
      name: `test-queue-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      lockDuration: 1000,
      stalledInterval: 500,
    }
    const queue = new RunQueue(settings)
    closers.push(async () => {
      await queue.obliterate()
      await queue.close()
    })
    const pieces: Array<[string, string]> = []
    await queue.enqueue({ id: 'run-resumed-text', prompt: 'x' })
    const unfollow = queue.followText('run-resumed-text', (text, turn) => pieces.push([text, turn]))
    let started = false
    const dying = new RunWorker(settings, {
      execute: ({ live }) => {
        live.nextTurn()
        live.delta('first worker, turn 1')
        started = true
        return new Promise(() => {})
      },
    })
    await expect.poll(() => pieces.length, { timeout: 10_000, interval: 10 }).toBe(1)
    expect(started).toBe(true)
    await (dying as unknown as { worker: { close(force: boolean): Promise<void> } }).worker.close(true)
    const next = new RunWorker(settings, {
      execute: async ({ live }) => {
        live.nextTurn()
        live.delta('second worker, turn 1')
        // Published before the run ends (the writer flushes at close).
      },
    })
    closers.push(() => next.close(0))
    await expect.poll(() => pieces.length, { timeout: 30_000, interval: 20 }).toBe(2)
    unfollow()
    expect(pieces.map(([text]) => text)).toEqual(['first worker, turn 1', 'second worker, turn 1'])
    // Another key: another turn, though both workers call it their first.
    expect(pieces[0]![1]).not.toBe(pieces[1]![1])
  }, 60_000)

  it('delivers a cancel to the worker holding the run at once (pub/sub), and says false for an unknown run', async () => {
    const seen: Array<{ id: string; aborted: boolean; code?: string; latency?: number }> = []
    let cancelledAt = 0
    const { queue, worker } = setup({
      execute: async ({ data, signal }) => {
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
        seen.push({ id: data.id, aborted: signal.aborted, code: (signal.reason as CordageError).code, latency: performance.now() - cancelledAt })
      },
    })
    await worker.ready()
    await queue.enqueue({ id: 'run-a', prompt: 'a' })
    while (!worker.running.includes('run-a')) await new Promise((resolve) => setTimeout(resolve, 10))
    cancelledAt = performance.now()
    expect(await queue.cancel('run-a')).toBe(true)
    while (seen.length < 1) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(seen[0]).toMatchObject({ id: 'run-a', aborted: true, code: 'CANCELLED' })
    console.log(`  cancel reached the worker in ${seen[0].latency!.toFixed(1)} ms`)
    // A hang bound, not a timing: pub/sub delivers within milliseconds (the figure above).
    expect(seen[0].latency).toBeLessThan(5000)
    expect(await queue.cancel('never-queued')).toBe(false)
  })

  it('stops a run whose lock another worker took: its signal aborts with LOCK_LOST and the job is left to the new owner', async () => {
    const seen: Array<{ code?: string }> = []
    const failed: string[] = []
    const { queue, worker, settings } = setup({
      execute: async ({ signal }) => {
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))
        seen.push({ code: (signal.reason as CordageError).code })
      },
      onFailed: async (id) => void failed.push(id),
    })
    await worker.ready()
    await queue.enqueue({ id: 'run-taken', prompt: 'x' })
    while (!worker.running.includes('run-taken')) await new Promise((resolve) => setTimeout(resolve, 10))
    // What the stalled check and another worker's take-over leave: the lock holds someone else's token.
    const { Redis } = await import('ioredis')
    const admin = new Redis(redis!)
    try {
      await admin.set(`bull:${settings.name}:run-taken:lock`, 'another-worker-token', 'PX', 60_000)
      // Renewal runs every lockDuration / 2 (500 ms): a 10 s hang bound.
      const deadline = Date.now() + 10_000
      while (!seen.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(seen).toEqual([{ code: 'LOCK_LOST' }])
      while (worker.running.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(worker.running).toEqual([])
      // Not completed nor failed by the worker that lost it: the lock's owner finishes it.
      expect(await queue.state('run-taken')).toBe('active')
      expect(await admin.get(`bull:${settings.name}:run-taken:lock`)).toBe('another-worker-token')
      expect(failed).toEqual([])
    } finally {
      await admin.del(`bull:${settings.name}:run-taken:lock`)
      admin.disconnect()
    }
  }, 30_000)

  it("stamps the worker's identity on each run it takes: the next worker to take it sees it as previousOwner", async () => {
    const settings = {
      redis: redis!,
      name: `test-queue-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      lockDuration: 1000,
      stalledInterval: 500,
    }
    const queue = new RunQueue(settings)
    closers.push(async () => {
      await queue.obliterate()
      await queue.close()
    })
    const first: WorkerIdentity = { host: 'machine-a', pid: 4242, start: 99, token: 'wfirst1' }
    const seen: Array<RunContext['previousOwner']> = []
    await queue.enqueue({ id: 'run-owned', prompt: 'x' })
    const dying = new RunWorker(settings, { identity: first, execute: ({ previousOwner }) => (seen.push(previousOwner), new Promise(() => {})) })
    while (seen.length < 1) await new Promise((resolve) => setTimeout(resolve, 20))
    // Dies holding the run: no lock renewal, as if killed.
    await (dying as unknown as { worker: { close(force: boolean): Promise<void> } }).worker.close(true)
    const next = new RunWorker(settings, {
      identity: { ...first, pid: 4343, token: 'wnext1' },
      execute: async ({ previousOwner }) => void seen.push(previousOwner),
    })
    closers.push(() => next.close(0))
    const deadline = Date.now() + 30_000
    while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(seen).toEqual([undefined, first])
  }, 60_000)

  it('fails a run whose worker keeps stopping after `attempts` starts, with the reason', async () => {
    const failed: Array<{ id: string; reason: string }> = []
    let starts = 0
    // The "dead" worker: takes the job and never finishes nor renews (a second worker with no lock renewal is
    // simulated by a worker that closes without waiting, so its lock expires).
    const settings = {
      redis: redis!,
      name: `test-queue-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      lockDuration: 1000,
      stalledInterval: 500,
      attempts: 2,
    }
    const queue = new RunQueue(settings)
    closers.push(async () => {
      await queue.obliterate()
      await queue.close()
    })
    await queue.enqueue({ id: 'run-doomed', prompt: 'x' })
    for (let attempt = 0; attempt < 2; attempt++) {
      const dying = new RunWorker(settings, { execute: () => (starts++, new Promise(() => {})) })
      // eslint-disable-next-line no-unmodified-loop-condition -- the worker's execute counts starts
      while (starts <= attempt) await new Promise((resolve) => setTimeout(resolve, 20))
      // Force-close: no more lock renewals, as if the process had died.
      await (dying as unknown as { worker: { close(force: boolean): Promise<void> } }).worker.close(true)
    }
    const judge = new RunWorker(settings, { execute: async () => void starts++, onFailed: async (id, reason) => void failed.push({ id, reason }) })
    closers.push(() => judge.close(0))
    const deadline = Date.now() + 30_000
    while (!failed.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(failed).toEqual([{ id: 'run-doomed', reason: expect.stringContaining('started 2 times') }])
    expect(starts).toBe(2)
    expect(await queue.state('run-doomed')).toBe('failed')
  }, 60_000)
})
