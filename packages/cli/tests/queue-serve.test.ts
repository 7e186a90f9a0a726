import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { start, waitFor, type Running } from './processes.js'
import { postgresUrl, redisUrl, scriptedTurn, uniqueQueueName, workerYaml, tearDown, until } from './queue-fixture.js'

/** An answer the model streams slowly (20 ms a piece), so a client sees it arrive. */
const STREAMED = 'A queued run streams its text to the studio as it is written, piece by piece, from whichever worker runs it.'

/** A turn's text before its tool call: stored as the turn is, and no longer live text while the call runs. */
const NARRATED = 'Let me take a short nap first.'

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
          if (prompt === 'stream') return { text: STREAMED, chunkSize: 6, delayMs: 20 }
          if (prompt === 'narrate') {
            if (messages.some((message: { role: string }) => message.role === 'tool')) return { text: 'Slept well.', delayMs: 20 }
            return { text: NARRATED, toolCalls: [{ id: 'call-nap', name: 'bash', arguments: JSON.stringify({ command: 'sleep 2' }) }] }
          }
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

  it("streams a queued run's text over SSE as its worker writes it (delta messages), then stores the whole turn", async () => {
    const { id } = (await (await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'stream' }) })).json()) as { id: string }
    const text = await (await fetch(`${url}/api/sessions/${id}/events`)).text()
    const frames = text
      .split('\n\n')
      .map((frame) => Object.fromEntries(frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])))
    const deltas = frames.filter((frame) => frame.event === 'delta').map((frame) => JSON.parse(frame.data).text as string)
    expect(deltas.length).toBeGreaterThan(1)
    // Each character once, in order: the stored turn is what the deltas spelled out.
    expect(deltas.join('')).toBe(STREAMED)
    const stored = frames.filter((frame) => frame.event === 'stored').map((frame) => JSON.parse(frame.data))
    const answer = stored.find((event) => event.type === 'assistant/message')
    expect(answer.data.text ?? answer.data.content).toBe(STREAMED)
    // Deltas come before the turn is stored.
    expect(frames.findIndex((frame) => frame.event === 'delta')).toBeLessThan(frames.findIndex((frame) => frame.data?.includes('"assistant/message"')))
  }, 120_000)

  it("a client that connects while a finished turn's tool call runs gets that turn stored, not again as live text", async () => {
    const { id } = (await (await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'narrate' }) })).json()) as { id: string }
    const stored = async () => ((await (await fetch(`${url}/api/sessions/${id}`)).json()) as { events: Array<{ type: string }> }).events
    // The turn is stored before its call runs (for two seconds).
    await until(async () => (await stored()).some((event) => event.type === 'assistant/message'))
    const text = await (await fetch(`${url}/api/sessions/${id}/events`)).text()
    const frames = text
      .split('\n\n')
      .map((frame) => Object.fromEntries(frame.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])))
    const turns = frames.filter((frame) => frame.data?.includes('"assistant/message"')).map((frame) => JSON.parse(frame.data).data.content)
    expect(turns).toEqual([NARRATED, 'Slept well.'])
    // Only the turn that streamed after the client connected comes as live text.
    expect(
      frames
        .filter((frame) => frame.event === 'delta')
        .map((frame) => JSON.parse(frame.data).text as string)
        .join(''),
    ).toBe('Slept well.')
  }, 120_000)

  it('cordage run --queue prints the text as the worker streams it, and each turn once, whole', async () => {
    const enqueuer = start(['run', '--queue', 'stream'], dir)
    let seenEarly = false
    // Part of the answer on stdout while the run still goes on (the stored turn would bring it all at once).
    expect(
      await waitFor(() => {
        const out = enqueuer.stdout()
        seenEarly ||= out.length > 0 && out.length < STREAMED.length && STREAMED.startsWith(out) && enqueuer.child.exitCode === null
        return seenEarly || enqueuer.child.exitCode !== null
      }, 60_000),
    ).toBe(true)
    expect(seenEarly, enqueuer.stdout() + enqueuer.stderr()).toBe(true)
    expect((await enqueuer.exited).code, enqueuer.stderr()).toBe(0)
    expect(enqueuer.stdout()).toBe(`${STREAMED}\n`)
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
