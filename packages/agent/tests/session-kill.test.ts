import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import type { SessionStore } from '@cordage/services'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, SessionLog, loadSession } from '../src/index.js'
import { noteTool, tempDir } from './helpers.js'

const child = fileURLToPath(new URL('./fixtures/kill-child.mjs', import.meta.url))

/** Runs the child until it has reported `reports` times, kills it with SIGKILL, and returns its last report. */
async function killAfter(reports: number, cwd: string, mode?: 'runs'): Promise<number> {
  const running = spawn(process.execPath, [child, cwd, 'killed', ...(mode ? [mode] : [])], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  running.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => running.once('exit', resolve))
  // Each line is the number of events appended when a turn ended; the run goes on while we read.
  const acknowledged = await new Promise<number>((resolve, reject) => {
    let out = ''
    let seen = 0
    // Hang detector only.
    const timer = setTimeout(() => reject(new Error(`the child did not report ${reports} times: ${stderr}`)), 60_000)
    running.stdout.on('data', (chunk) => {
      out += chunk
      const lines = out.split('\n')
      out = lines.pop()!
      seen += lines.length
      if (seen < reports) return
      clearTimeout(timer)
      running.kill('SIGKILL')
      resolve(Number(lines.at(-1)))
    })
    running.once('exit', (code, signal) => signal !== 'SIGKILL' && reject(new Error(`the child exited (${code}): ${stderr}`)))
  })
  await exited
  return acknowledged
}

it.each([5, 40, 150])(
  'kill -9 after %i turns loses no acknowledged event: the file holds every event the run had appended, whole',
  async (turns) => {
    const cwd = await tempDir()
    const acknowledged = await killAfter(turns, cwd)
    const loaded = loadSession(`${cwd}/.cordage/sessions/killed.jsonl`)
    // The header is not an event; every acknowledged event is there, numbered without a gap.
    expect(loaded.events.length - loaded.repairs.length).toBeGreaterThanOrEqual(acknowledged)
    expect(loaded.events.slice(0, acknowledged).map((event) => event.seq)).toEqual(Array.from({ length: acknowledged }, (_, index) => index + 1))
    expect(loaded.events.filter((event) => event.type === 'assistant/message').length).toBeGreaterThanOrEqual(turns)
  },
  120_000,
)

it.each([3, 60])(
  'kill -9 after %i returned runs (durability `process`: the fsync not awaited) loses none of their events',
  async (runs) => {
    const cwd = await tempDir()
    const acknowledged = await killAfter(runs, cwd, 'runs')
    const loaded = loadSession(`${cwd}/.cordage/sessions/killed.jsonl`)
    const returned = loaded.events.slice(0, acknowledged)
    expect(returned.map((event) => event.seq)).toEqual(Array.from({ length: acknowledged }, (_, index) => index + 1))
    // Every run that returned has its answer and its `run/end` on disk.
    expect(returned.at(-1)!.type).toBe('run/end')
    expect(returned.filter((event) => event.type === 'run/end').length).toBeGreaterThanOrEqual(runs)
  },
  120_000,
)

describe('durability', () => {
  it('`process` returns from a run before its fsync, `machine` after; close() always fsyncs', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'one' }, { text: 'two' }] })
    const dir = await tempDir()
    const session = SessionLog.create({ cwd: dir, dir })
    const flushes: string[] = []
    const sync = session.sync.bind(session)
    // Observes when each fsync settles relative to the run's return, without replacing it.
    session.sync = () => {
      const flushing = sync()
      flushing.then(() => flushes.push('fsynced'))
      return flushing
    }
    const agent = new Agent(ctx, { session })
    await agent.run('first')
    flushes.push('returned')
    await vi.waitFor(() => expect(flushes).toEqual(['returned', 'fsynced']), { timeout: 10_000 })
    session.durability = 'machine'
    await agent.run('second')
    flushes.push('returned')
    expect(flushes).toEqual(['returned', 'fsynced', 'fsynced', 'returned'])
    await session.close(false)
  })

  it('a store that is not a file is always awaited: a returned run is stored', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'stored' }] })
    const store = recordingStore()
    const session = SessionLog.createIn(store, { id: 'awaited' })
    expect(session.durability).toBe('process')
    await new Agent(ctx, { session }).run('go')
    expect(store.batches.flat()).toEqual(session.events.map((event) => event.seq))
    await session.close(false)
  })
})

/** A store that records each batch it is given (the seam a database store implements). */
function recordingStore(): SessionStore & { batches: number[][] } {
  const batches: number[][] = []
  return {
    kind: 'recording',
    batches,
    create: async () => {},
    append: async (_id, events) => void batches.push(events.map((event) => event.seq)),
    read: async () => {
      throw new Error('not read here')
    },
    list: async () => [],
    follow: () => {
      throw new Error('not followed here')
    },
  } as SessionStore & { batches: number[][] }
}

describe('syncSoon', () => {
  it('flushes within its delay when nothing else does, once for everything appended meanwhile', async () => {
    const store = recordingStore()
    const log = SessionLog.createIn(store, { id: 'soon' })
    log.append('user/message', { content: 'one' })
    log.syncSoon(20)
    log.append('user/message', { content: 'two' })
    log.syncSoon(20)
    expect(store.batches).toEqual([])
    // Hang bound only: the deferred flush comes after 20 ms.
    await vi.waitFor(() => expect(store.batches).toEqual([[1, 2]]), { timeout: 10_000 })
    await log.close(false)
    expect(store.batches).toEqual([[1, 2]])
  })

  it('is covered by a sync() before its delay: a short run of two turns is flushed once', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(noteTool())
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'note', arguments: { text: 'a' } }] }, { text: 'done' }] })
    const store = recordingStore()
    const session = SessionLog.createIn(store, { id: 'short' })
    // Timers held still, so a slow machine cannot let the deferred flush fire between the two turns.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const result = await new Agent(ctx, { session }).run('go')
      expect(result.stopReason).toBe('completed')
      expect(store.batches).toHaveLength(1)
      // No deferred flush is left to run later.
      vi.runAllTimers()
    } finally {
      vi.useRealTimers()
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(store.batches).toHaveLength(1)
    expect(store.batches[0]).toEqual(session.events.map((event) => event.seq))
    await session.close(false)
  })
})

it('a write cut short by a full disk (here a file size limit) fails SESSION_WRITE_FAILED and leaves the file whole for the next event', async () => {
  const dir = await tempDir()
  const limited = fileURLToPath(new URL('./fixtures/limit-child.mjs', import.meta.url))
  // 16 KiB: the header and small events fit, a 64 KiB event does not.
  const output = await new Promise<string>((resolve, reject) => {
    const running = spawn('bash', ['-c', 'ulimit -f 16 && exec "$0" "$@"', process.execPath, limited, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let stderr = ''
    running.stdout.on('data', (chunk) => (out += chunk))
    running.stderr.on('data', (chunk) => (stderr += chunk))
    running.once('exit', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`the child exited (${code ?? signal}): ${stderr}`))))
  })
  expect(JSON.parse(output)).toEqual({
    steps: ['ok', 'SESSION_WRITE_FAILED', 'ok'],
    closed: 'ok',
    events: [
      [1, 'before'],
      [2, 'after'],
      [3, 'session/end'],
    ],
  })
  const loaded = loadSession(`${dir}/limited.jsonl`)
  expect(loaded.warnings).toEqual([])
  expect(loaded.events.map((event) => [event.seq, event.type])).toEqual([
    [1, 'user/message'],
    [2, 'user/message'],
    [3, 'session/end'],
  ])
}, 60_000)
