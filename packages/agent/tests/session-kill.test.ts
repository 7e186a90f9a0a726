import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import type { SessionStore } from '@cordage/services'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, SessionLog, loadSession } from '../src/index.js'
import { noteTool, tempDir } from './helpers.js'

const child = fileURLToPath(new URL('./fixtures/kill-child.mjs', import.meta.url))

it.each([5, 40, 150])(
  'kill -9 after %i turns loses no acknowledged event: the file holds every event the run had appended, whole',
  async (turns) => {
    const cwd = await tempDir()
    const running = spawn(process.execPath, [child, cwd, 'killed'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    running.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise((resolve) => running.once('exit', resolve))
    // Each line is the number of events appended when a turn ended; the run goes on while we read.
    const acknowledged = await new Promise<number>((resolve, reject) => {
      let out = ''
      let seen = 0
      // Hang detector only.
      const timer = setTimeout(() => reject(new Error(`the child did not reach ${turns} turns: ${stderr}`)), 60_000)
      running.stdout.on('data', (chunk) => {
        out += chunk
        const lines = out.split('\n')
        out = lines.pop()!
        seen += lines.length
        if (seen < turns) return
        clearTimeout(timer)
        running.kill('SIGKILL')
        resolve(Number(lines.at(-1)))
      })
      running.once('exit', (code, signal) => signal !== 'SIGKILL' && reject(new Error(`the child exited (${code}): ${stderr}`)))
    })
    await exited
    const loaded = loadSession(`${cwd}/.cordage/sessions/killed.jsonl`)
    // The header is not an event; every acknowledged event is there, numbered without a gap.
    expect(loaded.events.length - loaded.repairs.length).toBeGreaterThanOrEqual(acknowledged)
    expect(loaded.events.slice(0, acknowledged).map((event) => event.seq)).toEqual(Array.from({ length: acknowledged }, (_, index) => index + 1))
    expect(loaded.events.filter((event) => event.type === 'assistant/message').length).toBeGreaterThanOrEqual(turns)
  },
  120_000,
)

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
