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
})
