import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
// The loopback OTLP/HTTP receiver of the telemetry plugin's own tests.
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../../plugins/otel/tests/receiver.js'
import { start, waitFor, type Running } from './processes.js'
import { postgresUrl, redisUrl, scriptedTurn, uniqueQueueName, workerYaml, tearDown } from './queue-fixture.js'

describe.skipIf(!redisUrl || !postgresUrl)('the trace of a queued run (needs eval "$(bash scripts/services.sh start)")', () => {
  let dir: string
  let model: FakeOpenAIServer
  let otlp: OtlpReceiver
  let worker: Running
  let server: Running
  let url: string
  const name = uniqueQueueName('otel')
  const env = (service: string) => ({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: service, OTEL_BSP_SCHEDULE_DELAY: '100' })

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cordage-queue-otel-'))
    otlp = await startOtlpReceiver()
    model = await startFakeOpenAI([scriptedTurn], { loop: true })
    writeFileSync(join(dir, 'cordage.yml'), workerYaml(model.baseURL, name, 'otel: {}'))
    worker = start(['worker'], dir, undefined, env('worker'))
    server = start(['serve', '--port', '0'], dir, undefined, env('serve'))
    if (!(await waitFor(() => worker.stdout().includes('worker ready') && server.stdout().includes('\n'), 60_000)))
      throw new Error(worker.stderr() + server.stderr())
    url = server.stdout().split('\n')[0]
  }, 90_000)

  afterAll(() => tearDown(name, [worker, server], [model, otlp], dir))

  /** The spans of run `id`'s trace: the enqueuer's `send` span, the worker's run span and its tool spans. */
  async function traceOf(id: string, service: string): Promise<{ send: ReceivedSpan; run: ReceivedSpan; tools: ReceivedSpan[] }> {
    const send = () => otlp.spans.find((span) => span.name === `send ${name}` && span.attributes['messaging.message.id'] === id)
    const run = () => otlp.spans.find((span) => span.name.startsWith('invoke_agent') && span.attributes['gen_ai.conversation.id'] === id)
    await otlp.waitFor(() => !!send() && !!run() && otlp.spans.some((span) => span.name === 'execute_tool write' && span.traceId === run()!.traceId))
    expect(send()!.resource['service.name']).toBe(service)
    expect(run()!.resource['service.name']).toBe('worker')
    return { send: send()!, run: run()!, tools: otlp.spans.filter((span) => span.traceId === run()!.traceId && span.name.startsWith('execute_tool')) }
  }

  it('cordage run --queue starts the trace at its enqueue span; the worker continues it down to the tool calls', async () => {
    const enqueuer = start(['run', '--queue', 'run traced steps 1'], dir, undefined, env('enqueuer'))
    expect(await enqueuer.exited).toMatchObject({ code: 0 })
    const id = /queued run (\S+)/.exec(enqueuer.stderr())![1]
    const { send, run, tools } = await traceOf(id, 'enqueuer')
    expect(send.kind).toBe(4) // PRODUCER
    expect(send.parentSpanId).toBe('')
    expect(send.attributes).toMatchObject({ 'messaging.system': 'bullmq', 'messaging.operation.type': 'send', 'messaging.destination.name': name })
    expect(run.traceId).toBe(send.traceId)
    expect(run.parentSpanId).toBe(send.spanId)
    expect(tools.map((span) => span.name)).toEqual(['execute_tool write'])
  }, 120_000)

  it('cordage serve starts it at POST /api/runs', async () => {
    const response = await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'run served steps 1' }) })
    expect(response.status).toBe(202)
    const { id } = (await response.json()) as { id: string }
    const { send, run, tools } = await traceOf(id, 'serve')
    expect(run.parentSpanId).toBe(send.spanId)
    expect(tools.every((span) => span.traceId === send.traceId)).toBe(true)
    expect(tools.length).toBe(1)
  }, 120_000)
})
