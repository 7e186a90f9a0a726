import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SessionStore, StoredEvent, StoredSessionHeader } from '@cordage/services'
import { errorMessage } from '@cordage/core'

/** What `testSessionStore` needs: a fresh, empty store per test, and how to release it. */
export interface SessionStoreFixture {
  store: SessionStore
  /** Closes what the store holds (connections, files); called after each test. */
  dispose(): Promise<void>
}

let counter = 0

/** A header for a new session with a unique id (`createdAt` as given, default now). */
export function sessionHeader(overrides: Partial<StoredSessionHeader> = {}): StoredSessionHeader {
  counter++
  return {
    type: 'session',
    version: 1,
    id: `s-${process.pid}-${counter}-${Math.random().toString(16).slice(2, 8)}`,
    createdAt: new Date().toISOString(),
    cwd: '/work',
    ...overrides,
  }
}

/** `count` user messages numbered from `from` (seq `from`, `from + 1`, …). */
export function sessionEvents(from: number, count: number, type = 'user/message'): StoredEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    type,
    seq: from + index,
    time: new Date().toISOString(),
    data: { content: `message ${from + index} ✓ "quoted" \\ \n newline` },
  }))
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise
    return undefined
  } catch (error) {
    return (error as { code?: string }).code ?? `uncoded: ${errorMessage(error)}`
  }
}

async function take(iterable: AsyncIterable<StoredEvent>, count: number): Promise<StoredEvent[]> {
  const events: StoredEvent[] = []
  if (count === 0) return events
  for await (const event of iterable) {
    events.push(event)
    if (events.length === count) break
  }
  return events
}

/**
 * The conformance suite of the `sessions` seam: every store (the JSONL files, PostgreSQL, a third
 * party's) must pass it. `open` makes a fresh, empty store for each test.
 */
export function testSessionStore(name: string, open: () => Promise<SessionStoreFixture>): void {
  describe(`session store conformance: ${name}`, () => {
    let fixture: SessionStoreFixture | undefined
    let store: SessionStore
    beforeEach(async () => {
      fixture = await open()
      store = fixture.store
    }, 30_000)
    afterEach(async () => {
      await fixture?.dispose()
      fixture = undefined
    }, 30_000)

    it('reads back the header and every appended event, in seq order, byte for byte', async () => {
      const header = sessionHeader({ model: 'scripted', parent: { session: 'p', callId: 'c1', tool: 'subagent' }, depth: 1 })
      await store.create(header)
      const first = sessionEvents(1, 3)
      const second = [
        {
          type: 'assistant/message',
          seq: 4,
          time: new Date().toISOString(),
          data: { content: 'ok', toolCalls: [{ id: 'x', name: 'read', arguments: '{"path":"a"}' }] },
        },
      ]
      await store.append(header.id, first)
      await store.append(header.id, second)
      const read = await store.read(header.id)
      expect(read.header).toEqual(header)
      expect(read.events).toEqual([...first, ...second])
      expect(read.warnings).toEqual([])
    })

    it('an empty batch stores nothing and is not an error', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, [])
      expect((await store.read(header.id)).events).toEqual([])
    })

    it('refuses a taken id with SESSION_EXISTS and keeps the first session', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, sessionEvents(1, 1))
      expect(await codeOf(store.create({ ...header, cwd: '/elsewhere' }))).toBe('SESSION_EXISTS')
      const read = await store.read(header.id)
      expect(read.header.cwd).toBe('/work')
      expect(read.events).toHaveLength(1)
    })

    it('unknown sessions fail with SESSION_NOT_FOUND on read, append and follow', async () => {
      expect(await codeOf(store.read('no-such-session'))).toBe('SESSION_NOT_FOUND')
      expect(await codeOf(store.append('no-such-session', sessionEvents(1, 1)))).toBe('SESSION_NOT_FOUND')
      expect(await codeOf(take(store.follow('no-such-session'), 1))).toBe('SESSION_NOT_FOUND')
    })

    it('ids that are not safe names fail with INVALID_SESSION_ID', async () => {
      for (const id of ['../escape', 'a/b', '', 'x'.repeat(129), '..']) {
        expect(await codeOf(store.create(sessionHeader({ id })))).toBe('INVALID_SESSION_ID')
        expect(await codeOf(store.read(id))).toBe('INVALID_SESSION_ID')
      }
    })

    it('an out-of-order batch fails with SESSION_SEQ and stores none of it', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, sessionEvents(1, 2))
      expect(await codeOf(store.append(header.id, sessionEvents(2, 2)))).toBe('SESSION_SEQ')
      expect(await codeOf(store.append(header.id, [...sessionEvents(3, 1), ...sessionEvents(5, 1)]))).toBe('SESSION_SEQ')
      expect(await codeOf(store.append(header.id, sessionEvents(4, 1)))).toBe('SESSION_SEQ')
      expect((await store.read(header.id)).events.map((event) => event.seq)).toEqual([1, 2])
      await store.append(header.id, sessionEvents(3, 1))
      expect((await store.read(header.id)).events.map((event) => event.seq)).toEqual([1, 2, 3])
    })

    it('concurrent writers of different sessions keep every event of each, in order', async () => {
      const headers = Array.from({ length: 8 }, () => sessionHeader())
      await Promise.all(headers.map((header) => store.create(header)))
      await Promise.all(
        headers.map(async (header) => {
          for (let turn = 0; turn < 10; turn++) await store.append(header.id, sessionEvents(turn * 3 + 1, 3))
        }),
      )
      for (const header of headers) {
        const seqs = (await store.read(header.id)).events.map((event) => event.seq)
        expect(seqs).toEqual(Array.from({ length: 30 }, (_, index) => index + 1))
      }
    })

    it('lists newest first with status, last seq and filters on status, time and parent', async () => {
      const old = sessionHeader({ createdAt: '2026-01-01T00:00:00.000Z' })
      const middle = sessionHeader({ createdAt: '2026-02-01T00:00:00.000Z' })
      const child = sessionHeader({ createdAt: '2026-03-01T00:00:00.000Z', parent: { session: middle.id, callId: 'c', tool: 'subagent' }, depth: 1 })
      for (const header of [middle, old, child]) await store.create(header)
      await store.append(old.id, [...sessionEvents(1, 1), { type: 'session/end', seq: 2, time: '2026-01-01T00:01:00.000Z', data: { reason: 'done' } }])
      await store.append(middle.id, sessionEvents(1, 4))
      const ours = new Set([old.id, middle.id, child.id])
      const ids = async (filter?: Parameters<SessionStore['list']>[0]) =>
        (await store.list(filter)).map((summary) => summary.header.id).filter((id) => ours.has(id))
      expect(await ids()).toEqual([child.id, middle.id, old.id])
      const summaries = (await store.list()).filter((summary) => ours.has(summary.header.id))
      expect(summaries.map((summary) => [summary.status, summary.lastSeq])).toEqual([
        ['running', 0],
        ['running', 4],
        ['ended', 2],
      ])
      expect(summaries[0].header).toEqual(child)
      expect(summaries[2].updatedAt).toBe('2026-01-01T00:01:00.000Z')
      expect(await ids({ status: 'ended' })).toEqual([old.id])
      expect(await ids({ status: 'running' })).toEqual([child.id, middle.id])
      expect(await ids({ since: '2026-02-01T00:00:00.000Z' })).toEqual([child.id, middle.id])
      expect(await ids({ until: '2026-02-01T00:00:00.000Z' })).toEqual([old.id])
      expect(await ids({ parent: middle.id })).toEqual([child.id])
      expect(await ids({ parent: null })).toEqual([middle.id, old.id])
      expect((await store.list({ limit: 1 })).length).toBe(1)
    })

    it('a session whose last event is session/waiting is waiting, and running again once an answer follows', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, [...sessionEvents(1, 2), eventAt(3, 'session/waiting', { request: { id: 'r1', kind: 'approval' }, callId: 'c1' })])
      const status = async () => (await store.list()).find((summary) => summary.header.id === header.id)?.status
      expect(await status()).toBe('waiting')
      expect((await store.list({ status: 'waiting' })).map((summary) => summary.header.id)).toContain(header.id)
      expect((await store.list({ status: 'running' })).map((summary) => summary.header.id)).not.toContain(header.id)
      await store.append(header.id, [eventAt(4, 'session/answer', { requestId: 'r1', answer: 'allow' })])
      expect(await status()).toBe('running')
    })

    it('follow yields what is stored after a seq, then live appends, and ends after session/end', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, sessionEvents(1, 3))
      const seen: number[] = []
      const following = (async () => {
        for await (const event of store.follow(header.id, { after: 1 })) seen.push(event.seq)
      })()
      await store.append(header.id, sessionEvents(4, 2))
      await store.append(header.id, [{ type: 'session/end', seq: 6, time: new Date().toISOString(), data: { reason: 'done' } }])
      await following
      expect(seen).toEqual([2, 3, 4, 5, 6])
    })

    it('follow of an ended session replays from the given seq and stops', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, [...sessionEvents(1, 2), { type: 'session/end', seq: 3, time: new Date().toISOString(), data: { reason: 'done' } }])
      expect((await take(store.follow(header.id, { after: 2 }), 5)).map((event) => event.seq)).toEqual([3])
    })

    it('follow ends without an error when its signal aborts, and waits for nothing after', async () => {
      const header = sessionHeader()
      await store.create(header)
      await store.append(header.id, sessionEvents(1, 1))
      const controller = new AbortController()
      const seen: number[] = []
      const following = (async () => {
        for await (const event of store.follow(header.id, { signal: controller.signal })) {
          seen.push(event.seq)
          if (event.seq === 2) controller.abort()
        }
      })()
      await store.append(header.id, sessionEvents(2, 1))
      await following
      expect(seen).toEqual([1, 2])
    })

    it('two followers of one session each see every live event once', async () => {
      const header = sessionHeader()
      await store.create(header)
      const follow = async () => (await take(store.follow(header.id), 6)).map((event) => event.seq)
      const followers = [follow(), follow()]
      for (let seq = 1; seq <= 5; seq++) await store.append(header.id, sessionEvents(seq, 1))
      await store.append(header.id, [{ type: 'session/end', seq: 6, time: new Date().toISOString(), data: { reason: 'done' } }])
      expect(await Promise.all(followers)).toEqual([
        [1, 2, 3, 4, 5, 6],
        [1, 2, 3, 4, 5, 6],
      ])
    })

    it('keeps large and unusual JSON data exactly', async () => {
      const header = sessionHeader()
      await store.create(header)
      const data = { content: 'x'.repeat(1_000_000), nested: { unicode: '\u2028\u2029\u0000 😀', numbers: [0, -1.5, 1e21], empty: {}, none: null } }
      await store.append(header.id, [{ type: 'tool/result', seq: 1, time: new Date().toISOString(), data }])
      expect((await store.read(header.id)).events[0].data).toEqual(data)
    })
  })
}

/** One event of type `type` at `seq`, stamped now. */
function eventAt(seq: number, type: string, data: object): StoredEvent {
  return { type, seq, time: new Date().toISOString(), data }
}
