import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenAI, type FakeOpenAIRequest, type FakeOpenAIServer, type FakeReply } from '@cordage/testing'
import { processesWith, start, waitFor, type Running } from './processes.js'
import { hasTmux, Terminal } from './tmux.js'
import { postgresUrl, redisUrl, uniqueQueueName, workerYaml, tearDown, until } from './queue-fixture.js'

const CHROMIUM = process.env.CORDAGE_CHROMIUM ?? '/usr/bin/chromium'
/** The length of the slow call's sleep, unique to this run: the sleep a killed worker orphans is found by it and ended. */
const ORPHAN = `29.${Math.floor(Math.random() * 1e9)}`

const plugins = `plugins:
  '@cordage/plugin-policy': { rules: [{ tool: bash, action: ask }, { tool: glob, action: ask }] }
  '@cordage/plugin-fs': {}
  '@cordage/plugin-shell': {}
  '@cordage/plugin-interaction': {}`

const questions = [{ id: 'color', question: 'Which color?', options: [{ label: 'red' }, { label: 'blue' }] }]

/** The model, a function of the conversation: `approve <tag>` and `slow <tag>` ask for one bash call, `question <tag>` asks the user, `quick` answers at once. */
function turn(request: FakeOpenAIRequest): FakeReply {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? []
  const prompt = String(messages.find((message) => message.role === 'user')?.content ?? '')
  const results = messages.filter((message) => message.role === 'tool').map((message) => String(message.content))
  if (results.length) return { text: `finished: ${results.join(' | ')}` }
  const [kind, tag] = prompt.split(' ')
  if (kind === 'approve')
    return { toolCalls: [{ id: `call-${tag}`, name: 'bash', arguments: JSON.stringify({ command: `mkdir -p out && echo ${tag} >> out/${tag}.txt` }) }] }
  // Marks its start, then works for a while: a worker killed in between leaves it in flight.
  if (kind === 'slow')
    return {
      toolCalls: [
        { id: `call-${tag}`, name: 'bash', arguments: JSON.stringify({ command: `mkdir -p out && echo ${tag} >> out/${tag}.started && sleep ${ORPHAN}` }) },
      ],
    }
  // Two parallel-safe calls in one turn: the first asks, the second runs (its result waits for the first's, in model order).
  if (kind === 'pair')
    return {
      toolCalls: [
        { id: `call-${tag}-glob`, name: 'glob', arguments: JSON.stringify({ pattern: '*.md' }) },
        { id: `call-${tag}-read`, name: 'read', arguments: JSON.stringify({ path: 'note.txt' }) },
      ],
    }
  if (kind === 'question') return { toolCalls: [{ id: `call-${tag}`, name: 'ask_user_question', arguments: JSON.stringify({ questions }) }] }
  return { text: 'quick answer' }
}

type Stored = { type: string; seq: number; data: any }

describe.skipIf(!redisUrl || !postgresUrl)('a queued run waiting for its user (needs eval "$(bash scripts/services.sh start)")', () => {
  let dir: string
  let model: FakeOpenAIServer
  let worker: Running
  let server: Running
  let url: string
  const name = uniqueQueueName('human')

  async function startWorker(): Promise<Running> {
    const started = start(['worker', '--concurrency', '1', '--grace', '1000'], dir)
    if (!(await waitFor(() => started.stdout().includes('worker ready') || started.child.exitCode !== null, 60_000)) || started.child.exitCode !== null)
      throw new Error(started.stderr())
    return started
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cordage-queue-human-'))
    model = await startFakeOpenAI([turn], { loop: true })
    writeFileSync(join(dir, 'cordage.yml'), workerYaml(model.baseURL, name, plugins))
    writeFileSync(join(dir, 'note.txt'), 'a note\n')
    writeFileSync(join(dir, 'listed.md'), '# listed\n')
    server = start(['serve', '--port', '0'], dir)
    worker = await startWorker()
    if (!(await waitFor(() => server.stdout().includes('\n'), 60_000))) throw new Error(server.stderr())
    url = server.stdout().split('\n')[0]
  }, 90_000)

  afterAll(() => tearDown(name, [worker, server], [model], dir))

  const api = async (path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) })
    return { status: response.status, body: (await response.json()) as any }
  }
  const startRun = async (prompt: string) => (await api('/api/runs', { prompt })).body.id as string
  const events = async (id: string) => (await api(`/api/sessions/${id}`)).body.events as Stored[]
  const listed = async (id: string) =>
    ((await api('/api/sessions')).body as Array<{ id: string; status: string; pending: number }>).find((entry) => entry.id === id)
  const ended = async (id: string) => {
    await until(async () => (await events(id)).at(-1)?.type === 'session/end')
    return events(id)
  }
  const waiting = async (id: string) => {
    await until(async () => (await listed(id))?.status === 'waiting')
    const pending = (await api(`/api/runs/${id}/pending`)).body as Array<{ id: string; kind: string; tool?: string; arguments?: unknown }>
    expect(pending).toHaveLength(1)
    return pending[0]
  }

  it('an approval frees the worker slot; the answer over HTTP resumes the run on another worker process, which runs the call once', async () => {
    const id = await startRun('approve allowed')
    const stream = fetch(`${url}/api/sessions/${id}/events`).then(
      (response) => response.text(),
      (error: Error) => `stream failed: ${error.message}`,
    )
    const request = await waiting(id)
    expect(request).toMatchObject({ kind: 'approval', tool: 'bash', arguments: { command: 'mkdir -p out && echo allowed >> out/allowed.txt' } })
    expect(await listed(id)).toMatchObject({ status: 'waiting', pending: 1 })
    expect(((await api('/api/sessions?status=waiting')).body as Array<{ id: string }>).map((entry) => entry.id)).toContain(id)
    expect(existsSync(join(dir, 'out/allowed.txt'))).toBe(false)
    // The only worker (concurrency 1) is free: another run completes while this one waits.
    const quick = await startRun('quick one')
    expect((await ended(quick)).at(-1)).toMatchObject({ data: { reason: 'completed' } })
    expect(worker.stderr()).toContain(`run ${id} waits for its user`)
    // That worker goes; the answer comes while no worker runs, and a new worker process resumes the run.
    worker.child.kill('SIGTERM')
    await worker.exited
    expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).status).toBe(200)
    worker = await startWorker()
    const stored = await ended(id)
    expect(worker.stderr()).toContain(`run ${id} resumes with its user's answer`)
    expect(stored.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    expect(readFileSync(join(dir, 'out/allowed.txt'), 'utf8')).toBe('allowed\n')
    const results = stored.filter((event) => event.type === 'tool/result')
    expect(results).toHaveLength(1)
    expect(results[0].data).toMatchObject({ callId: 'call-allowed', isError: false })
    expect(stored.map((event) => event.type).filter((type) => type.startsWith('session/'))).toEqual([
      'session/waiting',
      'session/answer',
      'session/resumed',
      'session/end',
    ])
    // A second answer to the same request is refused; it resumes nothing.
    expect(await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).toMatchObject({
      status: 409,
      body: { error: { code: 'ALREADY_ANSWERED' } },
    })
    expect(readFileSync(join(dir, 'out/allowed.txt'), 'utf8')).toBe('allowed\n')
    // The event stream showed the request as pending, then resolved.
    const text = await stream
    expect(text).toContain(`event: pending\ndata: ${JSON.stringify(request)}`)
    expect(text).toContain(`event: resolved\ndata: {"requestId":"${request.id}"}`)
  }, 180_000)

  it('two answers at once: one is stored and resumes the run, the other is 409; a deny is never run', async () => {
    const id = await startRun('approve denied')
    const request = await waiting(id)
    const answers = await Promise.all(['deny', 'deny'].map((answer) => api(`/api/runs/${id}/answers`, { requestId: request.id, answer })))
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
    const stored = await ended(id)
    expect(stored.filter((event) => event.type === 'session/answer')).toHaveLength(1)
    const results = stored.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => [event.data.isError, event.data.error?.code])).toEqual([[true, 'DENIED']])
    expect(stored.at(-1)).toMatchObject({ data: { reason: 'completed' } })
    expect(existsSync(join(dir, 'out/denied.txt'))).toBe(false)
  }, 120_000)

  it('two calls of one turn, one asking: the other runs once (before the wait, its result stored with it, or after the answer), the asking one after the answer', async () => {
    const id = await startRun('pair both')
    const request = await waiting(id)
    expect(request).toMatchObject({ kind: 'approval', tool: 'glob' })
    // The read either ran before the ask stopped the run (its result is stored with the wait) or had not
    // started (it runs on resume, after the glob): whichever, each call has one result, and no error.
    const before = (await events(id)).filter((event) => event.type === 'tool/result').map((event) => event.data.callId)
    expect(before.length === 0 || before.join() === 'call-both-read', before.join()).toBe(true)
    expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).status).toBe(200)
    const stored = await ended(id)
    const results = stored.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => [event.data.callId, event.data.isError]).sort()).toEqual([
      ['call-both-glob', false],
      ['call-both-read', false],
    ])
    expect(results.slice(0, before.length).map((event) => event.data.callId)).toEqual(before)
    expect(JSON.stringify(results.find((event) => event.data.callId === 'call-both-glob')!.data.content)).toContain('listed.md')
    expect(stored.at(-1)).toMatchObject({ data: { reason: 'completed' } })
  }, 120_000)

  it('a question waits the same way and the tool gets the answer', async () => {
    const id = await startRun('question colour')
    const request = await waiting(id)
    expect(request).toMatchObject({ kind: 'question', questions })
    expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: [{ id: 'colour', selected: ['red'] }] })).status).toBe(400)
    expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: [{ id: 'color', selected: ['blue'] }] })).status).toBe(200)
    const stored = await ended(id)
    const results = stored.filter((event) => event.type === 'tool/result')
    expect(results).toHaveLength(1)
    expect(results[0].data.isError).toBe(false)
    expect(JSON.stringify(results[0].data.content)).toContain('blue')
    expect(stored.at(-1)).toMatchObject({ data: { reason: 'completed' } })
  }, 120_000)

  it.skipIf(!hasTmux)(
    'cordage run --queue in a terminal answers the approval at its prompt; the run resumes on a worker',
    async () => {
      const terminal = new Terminal(dir, ['run', '--queue', 'approve prompted'])
      try {
        await terminal.waitFor(/Allow this call\?/)
        expect(terminal.screen()).toMatch(/run waits for approval of bash[^\n]*at this terminal/)
        expect(terminal.screen()).toMatch(/\? bash .*echo prompted/)
        terminal.keys('y', 'Enter')
        expect(await terminal.exitCode()).toBe(0)
        expect(terminal.screen()).toContain('finished: ')
      } finally {
        terminal.close()
      }
      expect(readFileSync(join(dir, 'out/prompted.txt'), 'utf8')).toBe('prompted\n')
    },
    120_000,
  )

  it.skipIf(!existsSync(CHROMIUM))(
    'the studio lists the run as waiting and takes the approval in the page',
    async () => {
      const id = await startRun('approve studio')
      await waiting(id)
      const profile = mkdtempSync(join(tmpdir(), 'cordage-chromium-'))
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
      })
      try {
        const page = await context.newPage()
        const errors: string[] = []
        page.on('pageerror', (error) => errors.push(error.message))
        await page.goto(`${url}/#/`)
        const row = page.locator('table.sessions tbody tr', { hasText: id })
        await row.waitFor({ timeout: 30_000 })
        expect(await row.locator('td').nth(1).textContent()).toBe('waiting (1 pending)')
        await page.goto(`${url}/#/sessions/${id}`)
        const allow = page.getByRole('button', { name: 'Allow bash this once' })
        await allow.waitFor({ timeout: 30_000 })
        await allow.click()
        await page.locator('.entry.session-end').waitFor({ timeout: 60_000 })
        expect(await page.getByRole('group', { name: 'Approve bash?' }).count()).toBe(0)
        expect(errors).toEqual([])
      } finally {
        await context.close()
        rmSync(profile, { recursive: true, force: true })
      }
      expect(readFileSync(join(dir, 'out/studio.txt'), 'utf8')).toBe('studio\n')
      expect((await events(id)).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    },
    180_000,
  )

  it('a worker killed while it runs the approved call leaves it INTERRUPTED for the next worker: it is never run twice', async () => {
    try {
      const id = await startRun('slow crashed')
      const request = await waiting(id)
      expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).status).toBe(200)
      const started = join(dir, 'out/crashed.started')
      expect(await waitFor(() => existsSync(started), 60_000)).toBe(true)
      worker.child.kill('SIGKILL')
      await worker.exited
      // The killed worker's bash call lives on, orphaned.
      expect(processesWith(ORPHAN)).not.toEqual([])
      worker = await startWorker()
      const stored = await ended(id)
      expect(stored.filter((event) => event.type === 'tool/result').map((event) => event.data.error?.code)).toEqual(['INTERRUPTED'])
      expect(stored.at(-1)).toMatchObject({ data: { reason: 'completed' } })
      expect(readFileSync(started, 'utf8')).toBe('crashed\n')
      // The worker that resumed the run (same machine) ended what the dead one left behind before going on.
      expect(processesWith(ORPHAN)).toEqual([])
      expect(worker.stderr()).toMatch(/ending \d+ process(es)? left by worker \d+, which died/)
    } finally {
      for (const pid of processesWith(ORPHAN)) process.kill(pid, 'SIGKILL')
    }
  }, 180_000)

  it("a worker whose lock on a run is taken stops the run at once and writes nothing more; the lock's owner finishes it, the call never run twice", async () => {
    // redis-cli comes with Debian's redis-server (redis-tools).
    const redis = (...args: string[]) => execFileSync('redis-cli', ['-u', redisUrl!, ...args], { encoding: 'utf8' }).trim()
    try {
      const id = await startRun('slow taken')
      const request = await waiting(id)
      expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).status).toBe(200)
      const started = join(dir, 'out/taken.started')
      expect(await waitFor(() => existsSync(started), 60_000)).toBe(true)
      // The resumed run's job (`<id>.resume-<n>`) is locked by this worker: give the lock to someone else,
      // as a stalled check and another worker do when renewals stop (a blocked event loop, a Redis outage).
      const [lock] = redis('--scan', '--pattern', `bull:${name}:${id}*:lock`).split('\n').filter(Boolean)
      expect(lock).toBeDefined()
      expect(redis('SET', lock!, 'another-worker-token', 'PX', '3000')).toBe('OK')
      // Stopped at the next renewal (every 2 s), long before its 29 s sleep would end: a 20 s hang bound.
      expect(await waitFor(() => worker.stderr().includes(`run ${id} left to the worker that took it over`), 20_000)).toBe(true)
      expect(await waitFor(() => processesWith(ORPHAN).length === 0, 20_000)).toBe(true)
      expect((await events(id)).map((event) => event.type)).not.toContain('session/end')
      // The foreign lock expires unrenewed: the stalled check hands the run back and a worker resumes it.
      const stored = await ended(id)
      expect(stored.filter((event) => event.type === 'tool/result').map((event) => event.data.error?.code)).toEqual(['INTERRUPTED'])
      expect(stored.filter((event) => event.type === 'session/end')).toHaveLength(1)
      expect(readFileSync(started, 'utf8')).toBe('taken\n')
    } finally {
      for (const pid of processesWith(ORPHAN)) process.kill(pid, 'SIGKILL')
    }
  }, 180_000)

  it('cancel while waiting ends the run cancelled; answering it then is refused', async () => {
    const id = await startRun('approve cancelled')
    const request = await waiting(id)
    expect((await api(`/api/runs/${id}/cancel`, {})).status).toBe(202)
    const stored = await events(id)
    expect(stored.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'cancelled' } })
    expect(stored.some((event) => event.type === 'tool/result')).toBe(false)
    expect((await listed(id))?.status).toBe('ended')
    expect((await api(`/api/runs/${id}/answers`, { requestId: request.id, answer: 'allow' })).status).toBe(409)
    expect((await api(`/api/runs/${id}/cancel`, {})).status).toBe(409)
    expect((await api(`/api/runs/${id}/pending`)).body).toEqual([])
    expect(existsSync(join(dir, 'out/cancelled.txt'))).toBe(false)
  }, 120_000)
})
