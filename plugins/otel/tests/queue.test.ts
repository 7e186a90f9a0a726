import { afterEach, describe, expect, it } from 'vitest'
import { trace } from '@opentelemetry/api'
import { Agent } from '@cordage/agent'
import { RunQueue, RunWorker } from '@cordage/queue'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import otel from '../src/index.js'
import { startOtlpReceiver } from './receiver.js'
import { startSdk } from './sdk.js'

const redisUrl = process.env.CORDAGE_TEST_REDIS_URL

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe.skipIf(!redisUrl)('a run enqueued on the queue (needs eval "$(bash scripts/services.sh start)")', () => {
  it("continues the enqueuer's trace in the worker that executes it, through the enqueue's send span", async () => {
    const receiver = await startOtlpReceiver()
    cleanups.push(() => receiver.close())
    const sdk = startSdk(receiver.url, 'protobuf')
    cleanups.push(() => sdk.shutdown())
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { id: 'scripted:queued', turns: [{ text: 'done' }] })
    await ctx.plugin(otel, {})
    const name = `test-otel-${process.pid}-${Math.random().toString(16).slice(2, 8)}`
    let finished!: () => void
    const ran = new Promise<void>((resolve) => (finished = resolve))
    // The worker runs the agent as `cordage worker` does: inside the context extracted from the job's carrier.
    const worker = new RunWorker(
      { redis: redisUrl!, name },
      {
        async execute({ data, signal }) {
          await new Agent(ctx, { agent: data.id }).run(data.prompt, { signal })
          finished()
        },
      },
    )
    cleanups.push(() => worker.close(1000))
    await worker.ready()
    const queue = new RunQueue({ redis: redisUrl!, name })
    cleanups.push(() => queue.close())
    // The enqueuer works inside a span of its own (an HTTP request's, a command's).
    const tracer = trace.getTracer('enqueuer')
    const enqueuer = await tracer.startActiveSpan('POST /api/runs', async (span) => {
      await queue.enqueue({ id: `run-${name}`, prompt: 'go' })
      span.end()
      return span.spanContext()
    })
    await ran
    await sdk.flush()
    const run = receiver.spans.find((span) => span.name === 'invoke_agent cordage')!
    // The enqueue is a producer span of its own, a child of the enqueuer's; the run is the enqueue's child.
    const send = receiver.spans.find((span) => span.name === `send ${name}`)!
    expect(send.parentSpanId).toBe(enqueuer.spanId)
    expect(run.traceId).toBe(enqueuer.traceId)
    expect(run.parentSpanId).toBe(send.spanId)
    expect(receiver.spans.find((span) => span.name === 'chat queued')?.parentSpanId).toBe(run.spanId)
  })

  it('a run resumed after it waited for its user continues the same trace', async () => {
    const receiver = await startOtlpReceiver()
    cleanups.push(() => receiver.close())
    const sdk = startSdk(receiver.url, 'protobuf')
    cleanups.push(() => sdk.shutdown())
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { id: 'scripted:waited', turns: [{ text: 'first start' }, { text: 'resumed' }] })
    await ctx.plugin(otel, {})
    const name = `test-otel-${process.pid}-${Math.random().toString(16).slice(2, 8)}`
    const starts: Array<number | undefined> = []
    let started!: () => void
    let ran = new Promise<void>((resolve) => (started = resolve))
    // The first start stops to wait (keeping its job); the resumed one runs to its end.
    const worker = new RunWorker(
      { redis: redisUrl!, name },
      {
        async execute({ data, signal, keep }) {
          starts.push(data.resumes)
          await new Agent(ctx, { agent: data.id }).run(data.prompt, { signal })
          started()
          if (data.resumes !== undefined) return
          await keep()
          return 'waiting'
        },
      },
    )
    cleanups.push(() => worker.close(1000))
    await worker.ready()
    const queue = new RunQueue({ redis: redisUrl!, name })
    cleanups.push(() => queue.close())
    const id = `run-${name}`
    const enqueuer = await trace.getTracer('enqueuer').startActiveSpan('POST /api/runs', async (span) => {
      await queue.enqueue({ id, prompt: 'go' })
      span.end()
      return span.spanContext()
    })
    await ran
    ran = new Promise<void>((resolve) => (started = resolve))
    // Resumed from outside any span (an answer over HTTP), twice: the second is a no-op.
    await queue.resume(id, 7)
    await queue.resume(id, 7)
    await ran
    await sdk.flush()
    expect(starts).toEqual([undefined, 7])
    const runs = receiver.spans.filter((span) => span.name === 'invoke_agent cordage')
    expect(runs.map((span) => span.traceId)).toEqual([enqueuer.traceId, enqueuer.traceId])
    // Each resume is a send span under the first one (the repeated resume too, though it added nothing).
    const sends = receiver.spans.filter((span) => span.name === `send ${name}`)
    const first = sends.find((span) => span.parentSpanId === enqueuer.spanId)!
    expect(sends.map((span) => span.traceId)).toEqual([enqueuer.traceId, enqueuer.traceId, enqueuer.traceId])
    expect(sends.filter((span) => span.parentSpanId === first.spanId)).toHaveLength(2)
    expect(runs[0].parentSpanId).toBe(first.spanId)
    expect(sends.find((span) => span.spanId === runs[1].parentSpanId)?.parentSpanId).toBe(first.spanId)
    // The resumed run ended: what it kept is gone, and a further resume says so.
    await expect(queue.resume(id, 8)).rejects.toMatchObject({ code: 'RUN_NOT_KEPT' })
  })
})
