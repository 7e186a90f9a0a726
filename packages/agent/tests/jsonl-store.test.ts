import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel, sessionEvents, sessionHeader, testSessionStore } from '@cordage/testing'
import { AgentService, JsonlSessions, JsonlSessionStore, SessionLog, deriveMessages, loadSession } from '../src/index.js'
import { tempDir } from './helpers.js'

testSessionStore('jsonl', async () => ({ store: new JsonlSessionStore({ cwd: await tempDir(), pollMs: 20 }), dispose: async () => {} }))

describe('the JSONL session store', () => {
  it('reads sessions written by SessionLog before the store existed, unchanged on disk', async () => {
    const cwd = await tempDir()
    const log = SessionLog.create({ cwd, id: 'old-one', model: 'm' })
    log.append('user/message', { content: 'hi' })
    log.append('assistant/message', { content: 'hello' })
    await log.close({ reason: 'done' })
    const before = readFileSync(log.file, 'utf8')
    const store = new JsonlSessionStore({ cwd })
    const read = await store.read('old-one')
    expect(read.header).toEqual(log.header)
    expect(read.events).toEqual(loadSession(log.file).events)
    expect((await store.list()).map((summary) => [summary.header.id, summary.status, summary.lastSeq])).toEqual([['old-one', 'ended', 3]])
    expect(readFileSync(log.file, 'utf8')).toBe(before)
  })

  it('drops a torn last line on read with a warning, and cuts it before the next append', async () => {
    const cwd = await tempDir()
    const store = new JsonlSessionStore({ cwd })
    const header = sessionHeader()
    await store.create(header)
    await store.append(header.id, sessionEvents(1, 2))
    appendFileSync(store.fileOf(header.id), '{"type":"user/message","seq":3,"ti')
    const torn = await store.read(header.id)
    expect(torn.events.map((event) => event.seq)).toEqual([1, 2])
    expect(torn.warnings).toEqual([expect.stringContaining('dropped a torn last line')])
    // A fresh store (another process) appends after the intact prefix.
    await new JsonlSessionStore({ cwd }).append(header.id, sessionEvents(3, 1))
    expect(loadSession(store.fileOf(header.id)).events.map((event) => event.seq)).toEqual([1, 2, 3])
    expect(readFileSync(store.fileOf(header.id), 'utf8').endsWith('\n')).toBe(true)
  })

  it('notices a writer in another store instance instead of trusting its cached tail', async () => {
    const cwd = await tempDir()
    const first = new JsonlSessionStore({ cwd })
    const second = new JsonlSessionStore({ cwd })
    const header = sessionHeader()
    await first.create(header)
    await first.append(header.id, sessionEvents(1, 1))
    await second.append(header.id, sessionEvents(2, 1))
    await expect(first.append(header.id, sessionEvents(2, 1))).rejects.toMatchObject({ code: 'SESSION_SEQ' })
    await first.append(header.id, sessionEvents(3, 1))
    expect((await first.read(header.id)).events.map((event) => event.seq)).toEqual([1, 2, 3])
  })

  it('lists a session whose last event is longer than the tail it reads first', async () => {
    const cwd = await tempDir()
    const store = new JsonlSessionStore({ cwd })
    const header = sessionHeader()
    await store.create(header)
    await store.append(header.id, [{ type: 'tool/result', seq: 1, time: '2026-01-01T00:00:00.000Z', data: { content: 'y'.repeat(300_000) } }])
    expect((await store.list()).map((summary) => summary.lastSeq)).toEqual([1])
    writeFileSync(join(store.dir, 'not-a-session.jsonl'), 'garbage\n')
    expect((await store.list()).map((summary) => summary.header.id)).toEqual([header.id])
  })

  it('is what the agent writes through when the sessions plugin is loaded, and what it resumes from', async () => {
    const cwd = await tempDir()
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'first' }, { text: 'second' }] })
    const storeFiber = await ctx.plugin(JsonlSessions, { cwd, dir: 'kept' })
    const agentFiber = await ctx.plugin(AgentService, { cwd })
    const store = ctx.get('sessions')!
    const agent = ctx.get('agent')!.create({ id: 'through-seam' })
    const live = (async () => {
      const seen: string[] = []
      for await (const event of store.follow('through-seam')) seen.push(event.type)
      return seen
    })()
    await agent.run('hello')
    await agent.session!.close({ reason: 'done' })
    expect(await live).toEqual(['user/message', 'assistant/message', 'run/end', 'session/end'])
    expect(agent.session!.file).toBe(join(cwd, 'kept', 'through-seam.jsonl'))
    const resumed = await ctx.get('agent')!.resumeStored('through-seam')
    await resumed.run('again')
    await resumed.session!.close()
    const read = await store.read('through-seam')
    expect(deriveMessages(read.events as never).map((message) => message.content)).toEqual(['hello', 'first', 'again', 'second'])
    await agentFiber.dispose()
    await storeFiber.dispose()
    expect(ctx.get('sessions')).toBeUndefined()
  })
})

describe('abandoning a session log', () => {
  it('writes nothing more: appends are refused, and a later writer of the JSONL store continues after every line already in the file', async () => {
    const cwd = await tempDir()
    const store = new JsonlSessionStore({ cwd })
    const log = SessionLog.createIn(store, { id: 'taken-over', model: 'm' })
    log.append('user/message', { content: 'in the file when append returns' })
    log.abandon()
    expect(() => log.append('assistant/message', { content: 'late' })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
    await log.sync()
    await log.close({ reason: 'done' })
    expect((await store.read('taken-over')).events.map((event) => [event.seq, event.type])).toEqual([[1, 'user/message']])
    const next = await SessionLog.openIn(store, 'taken-over')
    next.append('assistant/message', { content: 'from the new writer' })
    await next.close({ reason: 'done' })
    expect((await store.read('taken-over')).events.map((event) => [event.seq, event.type])).toEqual([
      [1, 'user/message'],
      [2, 'assistant/message'],
      [3, 'session/end'],
    ])
  })
})
