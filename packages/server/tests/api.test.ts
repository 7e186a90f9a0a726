import { request as httpRequest } from 'node:http'
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { StoredEvent, StoredSession } from '@cordage/services'
import { startServer } from '../src/server.js'
import type { PendingRequest } from '../src/pending.js'
import type { SessionInfo } from '../src/session-view.js'
import {
  eventually,
  freshDatabase,
  postgresUrl,
  sseReader,
  startHarness,
  type Harness,
  type HarnessOptions,
  type SseMessage,
  type StoreKind,
} from './harness.js'

const database = freshDatabase()
const stores: Array<[string, StoreKind]> = [
  ['JSONL', { kind: 'jsonl' }],
  ['PostgreSQL', { kind: 'postgres', url: () => database.url() }],
]

/** A raw request, so tests can send the headers `fetch` will not (`Host`) and bodies of any shape. */
function raw(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const request = httpRequest(
      { host: target.hostname, port: target.port, method: options.method ?? 'GET', path: options.path, headers: options.headers },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => (body += chunk))
        response.on('end', () => resolve({ status: response.statusCode!, body }))
      },
    )
    request.on('error', reject)
    request.end(options.body)
  })
}

const storedOf = (messages: SseMessage[]) => messages.filter((message) => message.event === 'stored').map((message) => JSON.parse(message.data) as StoredEvent)

describe.each(stores)('the API on the %s store', (label, store) => {
  const skip = store.kind === 'postgres' && !postgresUrl
  let harness: Harness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })
  const start = async (options: Omit<HarnessOptions, 'store'> = {}) => (harness = await startHarness({ store, ...options }))

  async function startRun(h: Harness, body: object = { prompt: 'go' }): Promise<string> {
    const response = await h.api('/api/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect(response.status).toBe(202)
    const started = (await response.json()) as { id: string; url: string }
    expect(started.url).toBe(`/api/sessions/${started.id}`)
    return started.id
  }

  it.skipIf(skip)('streams a live run over SSE: the tool call and its result, deltas of the current turn, session/end, then end', async () => {
    const h = await start({
      // The approval holds the run after the first turn, so the client is surely connected for the second.
      rules: [{ tool: 'echo', action: 'ask' }],
      turns: [
        { text: 'Let me echo.', toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] },
        { text: ['Done', ' echoing', '.'], delayMs: 20 },
      ],
    })
    const id = await startRun(h)
    const events = await h.api(`/api/sessions/${id}/events`)
    expect(events.status).toBe(200)
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const stream = sseReader(events)
    const request = JSON.parse((await stream.until((message) => message.event === 'pending')).at(-1)!.data) as PendingRequest
    const answered = await h.api(`/api/runs/${id}/answers`, { method: 'POST', body: JSON.stringify({ requestId: request.id, answer: 'allow' }) })
    expect(answered.status).toBe(200)
    const messages = await stream.until((message) => message.event === 'end')
    expect(messages.at(-1)).toEqual({ event: 'end', data: '{}' })
    expect(await stream.next()).toBeUndefined()
    const read = (await (await h.api(`/api/sessions/${id}`)).json()) as StoredSession
    const stored = read.events
    // Every stored event carries its seq as the SSE id, in order, from 1, with no gap.
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1))
    expect(stored.map((event) => event.type)).toEqual(['user/message', 'assistant/message', 'tool/result', 'assistant/message', 'run/end', 'session/end'])
    expect(stored[2].data).toMatchObject({ name: 'echo', isError: false, content: [{ type: 'text', text: 'hello' }] })
    expect(stored[5].data).toEqual({ reason: 'completed' })
    const afterAnswer = storedOf(messages)
    expect(afterAnswer).toEqual(stored.slice(stored.length - afterAnswer.length))
    expect(messages.filter((message) => message.event === 'stored').map((message) => message.id)).toEqual(afterAnswer.map((event) => String(event.seq)))
    // The second turn's text arrives as deltas (no id) before the turn is stored.
    const deltas = messages.filter((message) => message.event === 'delta')
    expect(deltas.every((message) => message.id === undefined)).toBe(true)
    expect(deltas.map((message) => (JSON.parse(message.data) as { text: string }).text).join('')).toBe('Done echoing.')
    const lastDelta = messages.lastIndexOf(deltas.at(-1)!)
    const turnStored = messages.findIndex((message) => message.event === 'stored' && JSON.parse(message.data).seq === 4)
    expect(lastDelta).toBeLessThan(turnStored)
  })

  it.skipIf(skip)('sends a client that connects mid-turn the text of the turn so far as one delta', async () => {
    const h = await start({ turns: [{ text: ['first ', 'second ', 'third'], delayMs: 300 }] })
    const id = await startRun(h)
    // Once a first client has seen some text stream, the late one connects (300 ms before the next piece).
    const early = sseReader(await h.api(`/api/sessions/${id}/events`))
    await early.until((message) => message.event === 'delta')
    const messages = await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end')
    await early.cancel()
    const deltas = messages.filter((message) => message.event === 'delta').map((message) => JSON.parse(message.data).text as string)
    const stored = storedOf(messages).find((event) => event.type === 'assistant/message')!.data as { content: string }
    // Whatever arrived live is the turn's text from its start: a prefix of what was stored, never a piece from
    // the middle, and what had streamed before it connected came as its first delta.
    expect(stored.content).toBe('first second third')
    expect(stored.content.startsWith(deltas.join(''))).toBe(true)
    if (deltas.length) expect(deltas[0]!.startsWith('first ')).toBe(true)
  })

  it.skipIf(skip)('resumes with Last-Event-ID (or ?after) from the next stored event: no gap, no duplicate', async () => {
    const h = await start({
      turns: [
        { text: 'one', toolCalls: [{ name: 'echo', arguments: { text: 'a' } }], delayMs: 20 },
        { text: 'two', toolCalls: [{ name: 'echo', arguments: { text: 'b' } }], delayMs: 150 },
        { text: 'three', delayMs: 150 },
      ],
    })
    const id = await startRun(h)
    const first = sseReader(await h.api(`/api/sessions/${id}/events`))
    const before = storedOf(await first.until((message) => message.event === 'stored' && JSON.parse(message.data).seq === 3))
    await first.cancel()
    expect(before.map((event) => event.seq)).toEqual([1, 2, 3])
    const resumed = await sseReader(await h.api(`/api/sessions/${id}/events`, { headers: { 'last-event-id': '3' } })).until(
      (message) => message.event === 'end',
    )
    const after = storedOf(resumed)
    const all = [...before, ...after]
    expect(all.map((event) => event.seq)).toEqual(all.map((_, index) => index + 1))
    expect(after.at(-1)!.type).toBe('session/end')
    // `?after=` is the same cursor for clients that cannot set headers.
    const viaQuery = storedOf(await sseReader(await h.api(`/api/sessions/${id}/events?after=${all.length - 2}`)).until((message) => message.event === 'end'))
    expect(viaQuery).toEqual(all.slice(-2))
    const bad = await h.api(`/api/sessions/${id}/events`, { headers: { 'last-event-id': 'x1' } })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_QUERY')
  })

  it.skipIf(skip)('ends at once a stream resumed after session/end, and refuses a Last-Event-ID past the last stored event', async () => {
    const h = await start({ turns: [{ text: 'done' }] })
    const id = await startRun(h)
    const all = storedOf(await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end'))
    const last = all.at(-1)!
    expect(last.type).toBe('session/end')
    // A client that got session/end but not `end` (or that reconnects whatever it was told) resumes after it.
    const resumed = sseReader(await h.api(`/api/sessions/${id}/events`, { headers: { 'last-event-id': String(last.seq) } }))
    const timer = setTimeout(() => void resumed.cancel(), 5_000)
    const messages = await resumed.until((message) => message.event === 'end')
    clearTimeout(timer)
    expect(messages).toEqual([{ event: 'end', data: '{}' }])
    expect(await resumed.next()).toBeUndefined()
    for (const forged of [String(last.seq + 1), '999999999999999']) {
      const response = await h.api(`/api/sessions/${id}/events`, { headers: { 'last-event-id': forged } })
      expect(response.status, forged).toBe(400)
      const { error } = (await response.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('INVALID_QUERY')
      expect(error.message).toContain(`last stored event is ${last.seq}`)
    }
  })

  it.skipIf(skip)('answers an approval over the API: pending on SSE and in the list, allow runs the tool, a second answer is 409', async () => {
    const h = await start({
      rules: [{ tool: 'echo', action: 'ask', reason: 'echo needs a yes' }],
      turns: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'approved' } }] },
        { toolCalls: [{ name: 'echo', arguments: { text: 'refused' } }] },
        { text: 'ok' },
      ],
    })
    const id = await startRun(h)
    const stream = sseReader(await h.api(`/api/sessions/${id}/events`))
    const [pending] = (await stream.until((message) => message.event === 'pending')).slice(-1)
    const request = JSON.parse(pending.data) as PendingRequest
    expect(request).toEqual({ id: expect.any(String), kind: 'approval', tool: 'echo', arguments: { text: 'approved' }, reason: 'echo needs a yes' })
    expect(await (await h.api(`/api/runs/${id}/pending`)).json()).toEqual([request])
    const listed = (await (await h.api('/api/sessions')).json()) as SessionInfo[]
    expect(listed.find((session) => session.id === id)).toMatchObject({ status: 'waiting', pending: 1 })

    const answer = (body: object) =>
      h.api(`/api/runs/${id}/answers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const wrong = await answer({ requestId: request.id, answer: 'perhaps' })
    expect(wrong.status).toBe(400)
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('INVALID_ANSWER')
    const unknown = await answer({ requestId: 'no-such-request', answer: 'allow' })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('REQUEST_NOT_FOUND')
    const ok = await answer({ requestId: request.id, answer: 'allow' })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ ok: true })
    const twice = await answer({ requestId: request.id, answer: 'allow' })
    expect(twice.status).toBe(409)
    expect(((await twice.json()) as { error: { code: string } }).error.code).toBe('ALREADY_ANSWERED')

    // The second call asks again; deny it.
    const rest = await stream.until((message) => message.event === 'pending')
    expect(rest.some((message) => message.event === 'resolved' && JSON.parse(message.data).requestId === request.id)).toBe(true)
    const second = JSON.parse(rest.at(-1)!.data) as PendingRequest
    expect(second).toMatchObject({ kind: 'approval', arguments: { text: 'refused' } })
    expect((await answer({ requestId: second.id, answer: 'deny' })).status).toBe(200)
    const stored = storedOf([...rest, ...(await stream.until((message) => message.event === 'end'))])
    const results = (await (await h.api(`/api/sessions/${id}`)).json()) as StoredSession
    const toolResults = results.events
      .filter((event) => event.type === 'tool/result')
      .map((event) => event.data as { isError: boolean; content: unknown; error?: { code?: string } })
    expect(toolResults[0]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'approved' }] })
    expect(toolResults[1]).toMatchObject({ isError: true, error: { code: 'DENIED' } })
    expect(stored.at(-1)!.type).toBe('session/end')
    expect(await (await h.api(`/api/runs/${id}/pending`)).json()).toEqual([])
  })

  it.skipIf(skip)('answers ask_user_question over the API', async () => {
    const questions = [{ id: 'color', question: 'Which color?', options: [{ label: 'red' }, { label: 'blue' }] }]
    const h = await start({ turns: [{ toolCalls: [{ name: 'ask_user_question', arguments: { questions } }] }, { text: 'noted' }] })
    const id = await startRun(h)
    const pending = await eventually(async () => {
      const list = (await (await h.api(`/api/runs/${id}/pending`)).json()) as PendingRequest[]
      return list.length ? list[0] : undefined
    })
    expect(pending).toMatchObject({ kind: 'question', questions })
    const bad = await h.api(`/api/runs/${id}/answers`, {
      method: 'POST',
      body: JSON.stringify({ requestId: pending.id, answer: [{ id: 'other', selected: [] }] }),
    })
    expect(bad.status).toBe(400)
    const ok = await h.api(`/api/runs/${id}/answers`, {
      method: 'POST',
      body: JSON.stringify({ requestId: pending.id, answer: [{ id: 'color', selected: ['blue'] }] }),
    })
    expect(ok.status).toBe(200)
    const messages = await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end')
    const result = storedOf(messages).find((event) => event.type === 'tool/result')!.data as { isError: boolean; content: Array<{ text: string }> }
    expect(result.isError).toBe(false)
    expect(result.content[0].text).toContain('blue')
  })

  it.skipIf(skip)('cancels a run: 202, the session ends as cancelled, pending requests are withdrawn, a second cancel is 409', async () => {
    const h = await start({ rules: [{ tool: 'echo', action: 'ask' }], turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'never' }] })
    const id = await startRun(h)
    const stream = sseReader(await h.api(`/api/sessions/${id}/events`))
    const pending = JSON.parse((await stream.until((message) => message.event === 'pending')).at(-1)!.data) as PendingRequest
    const cancelled = await h.api(`/api/runs/${id}/cancel`, { method: 'POST' })
    expect(cancelled.status).toBe(202)
    expect(await cancelled.json()).toEqual({ ok: true })
    const rest = await stream.until((message) => message.event === 'end')
    expect(rest.some((message) => message.event === 'resolved' && JSON.parse(message.data).requestId === pending.id)).toBe(true)
    expect(storedOf(rest).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'cancelled' } })
    const again = await h.api(`/api/runs/${id}/cancel`, { method: 'POST' })
    expect(again.status).toBe(409)
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('RUN_ENDED')
    const late = await h.api(`/api/runs/${id}/answers`, { method: 'POST', body: JSON.stringify({ requestId: pending.id, answer: 'allow' }) })
    expect(late.status).toBe(409)
    const listed = (await (await h.api('/api/sessions?status=ended')).json()) as SessionInfo[]
    expect(listed.find((session) => session.id === id)).toMatchObject({ status: 'ended', pending: 0 })
  })

  it.skipIf(skip)('lists sessions newest first with totals, filtered by status, parent and limit', async () => {
    // The PostgreSQL database is shared by this file's tests: look only at what this test made.
    const since = encodeURIComponent(new Date(Date.now() - 1).toISOString())
    const h = await start({
      turns: [
        { text: 'a', usage: { inputTokens: 10, outputTokens: 2 } },
        { text: 'b', usage: { inputTokens: 20, outputTokens: 3 } },
      ],
    })
    const first = await startRun(h)
    await sseReader(await h.api(`/api/sessions/${first}/events`)).until((message) => message.event === 'end')
    const second = await startRun(h)
    await sseReader(await h.api(`/api/sessions/${second}/events`)).until((message) => message.event === 'end')
    const all = (await (await h.api(`/api/sessions?since=${since}`)).json()) as SessionInfo[]
    expect(all.map((session) => session.id)).toEqual([second, first])
    expect(all[1]).toMatchObject({
      id: first,
      status: 'ended',
      turns: 1,
      usage: { inputTokens: 10, outputTokens: 2 },
      pending: 0,
      model: 'scripted',
      lastSeq: 4,
    })
    expect(all[1].durationMs).toBeGreaterThanOrEqual(0)
    expect(all[0].usage).toEqual({ inputTokens: 20, outputTokens: 3 })
    expect(((await (await h.api(`/api/sessions?since=${since}&limit=1`)).json()) as SessionInfo[]).map((session) => session.id)).toEqual([second])
    expect(await (await h.api(`/api/sessions?since=${since}&status=running`)).json()).toEqual([])
    expect(((await (await h.api(`/api/sessions?since=${since}&parent=none`)).json()) as SessionInfo[]).length).toBe(2)
    expect(await (await h.api(`/api/sessions?parent=${first}`)).json()).toEqual([])
    expect(
      ((await (await h.api(`/api/sessions?since=${since}&until=${encodeURIComponent(all[0].createdAt)}`)).json()) as SessionInfo[]).map((s) => s.id),
    ).toEqual([first])
    for (const query of ['status=paused', 'limit=-1', 'since=yesterday']) {
      const response = await h.api(`/api/sessions?${query}`)
      expect(response.status, query).toBe(400)
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_QUERY')
    }
  })

  it.skipIf(skip)('answers 404, 400 and 413 with coded JSON and stays up', async () => {
    const h = await start({ bodyLimit: 10_000 })
    const code = async (response: Response) => ({ status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code })
    expect(await code(await h.api('/api/sessions/no-such-session'))).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' })
    expect(await code(await h.api('/api/sessions/no-such-session/events'))).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' })
    expect(await code(await h.api('/api/runs/no-such-run/pending'))).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' })
    expect(await code(await h.api('/api/runs/no-such-run/cancel', { method: 'POST' }))).toEqual({ status: 404, code: 'SESSION_NOT_FOUND' })
    expect(await code(await h.api('/api/nothing'))).toEqual({ status: 404, code: 'NOT_FOUND' })
    // Path-ish ids never reach the store as paths.
    for (const path of ['/api/sessions/..%2F..%2Fetc%2Fpasswd', '/api/sessions/%2e%2e', '/api/sessions/a%00b/events', `/api/sessions/${'x'.repeat(300)}`]) {
      const response = await raw(h.url, { path })
      expect(response.status, path).toBeGreaterThanOrEqual(400)
      expect(response.status, path).toBeLessThan(500)
      expect(JSON.parse(response.body).error.code, path).toMatch(/^(INVALID_SESSION_ID|NOT_FOUND|SESSION_NOT_FOUND)$/)
    }
    const post = (body: string | Buffer) => raw(h.url, { method: 'POST', path: '/api/runs', headers: { 'content-type': 'application/json' }, body })
    const huge = await post(Buffer.alloc(50_000, 'a'))
    expect(huge.status).toBe(413)
    expect(JSON.parse(huge.body).error.code).toBe('PAYLOAD_TOO_LARGE')
    // A chunked body with no length is cut at the limit too.
    const chunked = await new Promise<number>((resolve, reject) => {
      const target = new URL(h.url)
      const request = httpRequest(
        { host: target.hostname, port: target.port, method: 'POST', path: '/api/runs', headers: { 'transfer-encoding': 'chunked' } },
        (response) => {
          response.resume()
          resolve(response.statusCode!)
        },
      )
      request.on('error', reject)
      for (let index = 0; index < 20; index++) request.write(Buffer.alloc(1000, 'b'))
      request.end()
    })
    expect(chunked).toBe(413)
    for (const [body, expected] of [
      ['{"prompt":', 'INVALID_JSON'],
      ['[1,2]', 'INVALID_BODY'],
      ['{"prompt":""}', 'INVALID_BODY'],
      ['{"prompt":"x","extra":1}', 'INVALID_BODY'],
      ['{"prompt":"x","options":{"maxTurns":0}}', 'INVALID_BODY'],
      ['{"prompt":"x","cassette":"../../etc/passwd"}', 'INVALID_CASSETTE'],
      ['{"prompt":"x","cassette":"/etc/passwd"}', 'INVALID_CASSETTE'],
    ] as const) {
      const response = await post(body)
      expect(response.status, body).toBe(400)
      expect(JSON.parse(response.body).error.code, body).toBe(expected)
    }
    // A symlink inside the directory that points out of it is refused as well.
    symlinkSync('/etc/hostname', join(h.dir, 'escape.json'))
    expect(JSON.parse((await post('{"prompt":"x","cassette":"escape.json"}')).body).error.code).toBe('INVALID_CASSETTE')
    expect(await (await h.api('/api/health')).json()).toEqual({ ok: true })
  })

  it.skipIf(skip)('runs a cassette inside the working directory', async () => {
    const h = await start({
      local: {
        // The server checks the path; the CLI supplies the replaying model, here a scripted one per file.
        cassette: (file) => {
          const turns = JSON.parse(readFileSync(file, 'utf8')).turns as Array<{ text: string }>
          let played = 0
          return {
            id: 'tape',
            async *stream() {
              yield { type: 'text' as const, delta: turns[played++].text }
              yield { type: 'done' as const, finishReason: 'stop' }
            },
          }
        },
      },
    })
    writeFileSync(join(h.dir, 'tape.json'), JSON.stringify({ version: 1, turns: [{ text: 'from the tape' }] }))
    const id = await startRun(h, { prompt: 'play', cassette: 'tape.json' })
    const stored = storedOf(await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end'))
    expect(stored.find((event) => event.type === 'assistant/message')!.data).toMatchObject({ content: 'from the tape' })
    const missing = await h.api('/api/runs', { method: 'POST', body: JSON.stringify({ prompt: 'x', cassette: 'missing.json' }) })
    expect(missing.status).toBe(400)
  })

  it.skipIf(skip)(`refuses foreign Host and Origin with 403 (${label})`, async () => {
    const h = await start()
    const port = new URL(h.url).port
    const status = async (headers: Record<string, string>) => {
      const response = await raw(h.url, { path: '/api/health', headers })
      return { status: response.status, code: response.status === 200 ? undefined : JSON.parse(response.body).error.code }
    }
    expect(await status({ host: `127.0.0.1:${port}` })).toEqual({ status: 200, code: undefined })
    expect(await status({ host: `localhost:${port}` })).toEqual({ status: 200, code: undefined })
    expect(await status({ host: `attacker.example:${port}` })).toEqual({ status: 403, code: 'HOST_REFUSED' })
    expect(await status({ host: `127.0.0.1:${Number(port) + 1}` })).toEqual({ status: 403, code: 'HOST_REFUSED' })
    expect(await status({ host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` })).toEqual({ status: 200, code: undefined })
    expect(await status({ host: `127.0.0.1:${port}`, origin: 'http://attacker.example' })).toEqual({ status: 403, code: 'ORIGIN_REFUSED' })
    expect(await status({ host: `127.0.0.1:${port}`, origin: 'null' })).toEqual({ status: 403, code: 'ORIGIN_REFUSED' })
    expect(await status({ host: `127.0.0.1:${port}`, origin: `https://127.0.0.1:${port}` })).toEqual({ status: 403, code: 'ORIGIN_REFUSED' })
  })

  it.skipIf(skip)('with a token, every /api request needs it (401 otherwise); the page does not', async () => {
    const token = 'a-token-of-enough-length'
    const h = await start({ token })
    expect((await h.api('/api/health')).status).toBe(200)
    const none = await fetch(`${h.url}/api/sessions`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED')
    expect((await fetch(`${h.url}/api/runs`, { method: 'POST', headers: { authorization: 'Bearer wrong-token-of-some-length' }, body: '{}' })).status).toBe(401)
    expect((await fetch(`${h.url}/api/openapi.json`, { headers: { authorization: `Basic ${token}` } })).status).toBe(401)
    const page = await fetch(`${h.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
  })

  it.skipIf(skip)(
    'survives a thousand event-stream clients connecting and dropping: every stream is released',
    async () => {
      const h = await start({
        maxStreams: 40,
        rules: [{ tool: 'echo', action: 'ask' }],
        turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'end' }],
      })
      const id = await startRun(h)
      await eventually(async () => (((await (await h.api(`/api/runs/${id}/pending`)).json()) as unknown[]).length ? true : undefined))
      // All 40 slots at once; when some are still held by clients that left, abort and try again.
      const fill = async (count: number) => {
        const controllers = Array.from({ length: count }, () => new AbortController())
        const responses = await Promise.all(controllers.map((controller) => h.api(`/api/sessions/${id}/events`, { signal: controller.signal })))
        return { responses, drop: () => controllers.forEach((controller) => controller.abort()) }
      }
      const admitted = () =>
        eventually(async () => {
          const attempt = await fill(40)
          if (attempt.responses.every((response) => response.status === 200)) return attempt
          attempt.drop()
          return undefined
        })
      for (let round = 0; round < 25; round++) {
        const { responses, drop } = await admitted()
        // Half read their first message before leaving, half leave at once.
        await Promise.all(responses.slice(0, 20).map((response) => sseReader(response).next()))
        drop()
      }
      // Had any dropped client kept its slot, 40 would never get in again.
      ;(await admitted()).drop()
      const over = await eventually(async () => {
        const attempt = await fill(41)
        const statuses = attempt.responses.map((response) => response.status)
        if (statuses.filter((status) => status === 200).length === 40) return { attempt, statuses }
        attempt.drop()
        return undefined
      })
      expect(over.statuses.filter((status) => status === 503)).toHaveLength(1)
      over.attempt.drop()
      // The run is untouched by all of it: answer, and a fresh client sees it to the end.
      const [pending] = (await (await h.api(`/api/runs/${id}/pending`)).json()) as PendingRequest[]
      expect((await h.api(`/api/runs/${id}/answers`, { method: 'POST', body: JSON.stringify({ requestId: pending.id, answer: 'allow' }) })).status).toBe(200)
      const stored = storedOf(await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end'))
      expect(stored.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    },
    120_000,
  )
})

describe('starting the server', () => {
  it('refuses a non-loopback host without a token, and a short token', async () => {
    const { createTestContext } = await import('@cordage/testing')
    const { JsonlSessions } = await import('@cordage/agent')
    const ctx = await createTestContext()
    await ctx.plugin(JsonlSessions, { cwd: '/tmp' })
    await expect(startServer({ ctx, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'TOKEN_REQUIRED' })
    await expect(startServer({ ctx, host: '::' })).rejects.toMatchObject({ code: 'TOKEN_REQUIRED' })
    await expect(startServer({ ctx, host: '127.0.0.1', token: 'short' })).rejects.toMatchObject({ code: 'TOKEN_TOO_SHORT' })
    // Refused before anything was provided: no approval service was left behind.
    expect(ctx.get('approval')).toBeUndefined()
    const server = await startServer({ ctx, host: '0.0.0.0', token: 'a-token-of-enough-length' })
    try {
      expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/)
      expect((await fetch(`http://127.0.0.1:${server.port}/api/health`)).status).toBe(403)
    } finally {
      await server.close()
    }
    expect(ctx.get('approval')).toBeUndefined()
  })
})
