import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { start, waitFor, type Running } from './processes.js'
import { postgresUrl, redisUrl, scriptedTurn, uniqueQueueName, workerYaml, tearDown, until } from './queue-fixture.js'

describe.skipIf(!redisUrl || !postgresUrl)('cordage serve with queue: (needs eval "$(bash scripts/services.sh start)")', () => {
  let dir: string
  let model: FakeOpenAIServer
  let worker: Running
  let server: Running
  let url: string
  const name = uniqueQueueName('serve')

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cordage-queue-serve-'))
    // A prompt `sleep` makes the model ask for a long bash call; anything else is the scripted run.
    model = await startFakeOpenAI(
      [
        (request) => {
          const messages = request.body?.messages ?? []
          const prompt = messages.find((message: { role: string }) => message.role === 'user')?.content
          if (prompt !== 'sleep') return scriptedTurn(request)
          if (messages.some((message: { role: string }) => message.role === 'tool')) return { text: 'slept' }
          return { toolCalls: [{ id: 'call-sleep', name: 'bash', arguments: JSON.stringify({ command: 'sleep 30 && touch slept' }) }] }
        },
      ],
      { loop: true },
    )
    writeFileSync(join(dir, 'cordage.yml'), workerYaml(model.baseURL, name))
    worker = start(['worker', '--concurrency', '2'], dir)
    server = start(['serve', '--port', '0'], dir)
    if (!(await waitFor(() => worker.stdout().includes('worker ready') && server.stdout().includes('\n'), 60_000)))
      throw new Error(worker.stderr() + server.stderr())
    url = server.stdout().split('\n')[0]
  }, 90_000)

  afterAll(() => tearDown(name, [worker, server], [model], dir))

  it('POST /api/runs enqueues the run, a worker runs it, and the session and its SSE stream come from the shared store', async () => {
    const response = await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'run served steps 2' }) })
    expect(response.status).toBe(202)
    const { id } = (await response.json()) as { id: string }
    const stream = await fetch(`${url}/api/sessions/${id}/events`)
    const text = await stream.text()
    expect(text).toContain('event: end')
    expect(text).toContain('"type":"tool/result"')
    const session = (await (await fetch(`${url}/api/sessions/${id}`)).json()) as { events: Array<{ type: string; data: { reason?: string } }> }
    expect(session.events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    // The worker says so after it stored session/end, which a stream client may see first.
    expect(await waitFor(() => worker.stderr().includes(`run ${id} ended: completed`), 30_000), worker.stderr()).toBe(true)
    expect(existsSync(join(dir, 'out/served/write-0.txt'))).toBe(true)
  }, 120_000)

  it('cancel from the API reaches the worker running the run: its bash call is stopped and the session ends cancelled', async () => {
    const { id } = (await (await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'sleep' }) })).json()) as { id: string }
    expect(await waitFor(() => worker.stderr().includes(`run ${id} started`), 60_000)).toBe(true)
    // The call is stored before it runs: once it is, the bash process is starting or running.
    const stored = async () => ((await (await fetch(`${url}/api/sessions/${id}`)).json()) as { events: Array<{ type: string }> }).events
    await until(async () => (await stored()).some((event) => event.type === 'assistant/message'))
    const sent = performance.now()
    expect((await fetch(`${url}/api/runs/${id}/cancel`, { method: 'POST' })).status).toBe(202)
    await until(async () => (await stored()).some((event) => event.type === 'session/end'))
    const latency = performance.now() - sent
    console.log(`  cancel → session/end stored: ${latency.toFixed(0)} ms`)
    expect((await stored()).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'cancelled' } })
    expect(existsSync(join(dir, 'slept'))).toBe(false)
    // Hang bound only (a loaded machine); the figure above is the measurement.
    expect(latency).toBeLessThan(10_000)
    // The server answers a run that already ended with RUN_ENDED.
    expect((await fetch(`${url}/api/runs/${id}/cancel`, { method: 'POST' })).status).toBe(409)
  }, 120_000)
})
