import { Client } from '../src/pg.js'
import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel, sessionEvents, sessionHeader, testSessionStore } from '@cordage/testing'
import { AgentService, deriveMessages, SessionLog, type SessionEvent } from '@cordage/agent'
import StorePostgres, { PostgresSessionStore, SCHEMA_VERSION } from '../src/index.js'
import { connectionsTo, freshDatabase, serverUrl } from './database.js'

// The reason a run without the server skips is in the title vitest prints.
describe.skipIf(!serverUrl)('on a real PostgreSQL (needs CORDAGE_TEST_POSTGRES_URL: eval "$(scripts/services.sh start)")', () => {
  const database = freshDatabase()

  testSessionStore('postgres', async () => {
    const store = new PostgresSessionStore({ url: database.url(), pollMs: 50 })
    await store.open()
    return { store, dispose: () => store.close() }
  })

  describe('PostgreSQL session store', () => {
    it("a follower in another process's store gets each batch from its notification, small or too large to carry", async () => {
      // Polling is an hour away: whatever arrives came through LISTEN/NOTIFY (the batch in the payload, or the id and a read).
      const writer = new PostgresSessionStore({ url: database.url() })
      const reader = new PostgresSessionStore({ url: database.url(), pollMs: 3_600_000 })
      await writer.open()
      await reader.open()
      try {
        const header = sessionHeader()
        await writer.create(header)
        const small = sessionEvents(1, 2)
        const large = sessionEvents(3, 1).map((event) => ({ ...event, data: { content: 'x'.repeat(20_000), order: { b: 1, a: [2, '\u0000'] } } }))
        const end = [{ type: 'session/end', seq: 4, time: new Date().toISOString(), data: { reason: 'completed' } }]
        const seen: unknown[] = []
        const following = (async () => {
          for await (const event of reader.follow(header.id)) {
            seen.push(event)
            // Each batch is appended once the follower has the one before, so each comes from its own notification.
            if (event.seq === 2) await writer.append(header.id, large)
            if (event.seq === 3) await writer.append(header.id, end)
          }
        })()
        await writer.append(header.id, small)
        await following
        expect(seen).toEqual([...small, ...large, ...end])
        expect(JSON.stringify((seen[2] as { data: unknown }).data)).toBe(JSON.stringify(large[0]!.data))
        expect((await reader.read(header.id)).events).toEqual(seen)
      } finally {
        await writer.close()
        await reader.close()
      }
    })

    it('an abandoned session log stores nothing more: its unflushed events are dropped and the writer that took over continues after the stored ones', async () => {
      const store = new PostgresSessionStore({ url: database.url() })
      await store.open()
      try {
        const log = SessionLog.createIn(store, { id: 'taken-over', model: 'm' })
        log.append('user/message', { content: 'stored' })
        await log.sync()
        log.append('assistant/message', { content: 'never stored' })
        log.abandon()
        expect(() => log.append('user/message', { content: 'late' })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
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
      } finally {
        await store.close()
      }
    })

    it('a follower whose notification connection is dropped listens again and keeps getting batches without polling', async () => {
      // Polling is an hour away: an event that arrives after the drop came through a new LISTEN.
      const writer = new PostgresSessionStore({ url: database.url() })
      const reader = new PostgresSessionStore({ url: database.url(), pollMs: 3_600_000 })
      await writer.open()
      await reader.open()
      const listening = async () =>
        (
          await database
            .admin()
            .query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`, [new URL(database.url()).pathname.slice(1)])
        ).rows.map((row) => row.pid as number)
      try {
        const header = sessionHeader()
        await writer.create(header)
        const [first, second] = [sessionEvents(1, 1), sessionEvents(2, 1)]
        const seen: number[] = []
        let dropped: number[] = []
        const following = (async () => {
          for await (const event of reader.follow(header.id)) {
            seen.push(event.seq)
            if (event.seq === 1) {
              // The server ends the notification connection (a restart, a proxy or an administrator would).
              dropped = await listening()
              await database.admin().query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [dropped])
              await expect.poll(async () => (await listening()).filter((pid) => !dropped.includes(pid)).length, { timeout: 10_000, interval: 20 }).toBe(1)
              await writer.append(header.id, second)
            }
            if (event.seq === 2)
              await writer.append(header.id, [{ type: 'session/end', seq: 3, time: new Date().toISOString(), data: { reason: 'completed' } }])
          }
        })()
        await writer.append(header.id, first)
        await following
        expect(dropped).toHaveLength(1)
        expect(seen).toEqual([1, 2, 3])
      } finally {
        await writer.close()
        await reader.close()
      }
    })

    it('migrates once, records the version, and concurrent starters agree', async () => {
      const stores = Array.from({ length: 4 }, () => new PostgresSessionStore({ url: database.url() }))
      try {
        const before = await Promise.all(stores.map((store) => store.open()))
        // The conformance suite migrated this database already; nobody migrates it again.
        expect(before).toEqual([SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION, SCHEMA_VERSION])
      } finally {
        await Promise.all(stores.map((store) => store.close()))
      }
      const client = new Client({ connectionString: database.url() })
      await client.connect()
      try {
        expect((await client.query('SELECT version FROM cordage_schema_version ORDER BY version')).rows).toEqual([{ version: 1 }])
        // One row per event, keyed by (session, seq).
        const key = await client.query(`SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
          WHERE i.indrelid = 'cordage_events'::regclass AND i.indisprimary ORDER BY a.attnum`)
        expect(key.rows.map((row) => row.attname)).toEqual(['session_id', 'seq'])
      } finally {
        await client.end()
      }
    })

    it('refuses an unreachable server at load with STORE_UNAVAILABLE, and a missing url naming the plugin', async () => {
      const ctx = await createTestContext()
      await expect(ctx.plugin(StorePostgres, { url: 'postgres://postgres@127.0.0.1:1/none' })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' })
      await expect(ctx.plugin(StorePostgres, {} as never)).rejects.toThrow(/store-postgres/)
      await expect(ctx.plugin(StorePostgres, { url: database.url(), poolsize: 3 } as never)).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
      expect(ctx.get('sessions')).toBeUndefined()
    })

    it('is what the agent writes through, one append per turn, resumable, and unloading closes every connection', async () => {
      const ctx = await createTestContext()
      await ctx.plugin(ScriptedModel, { turns: [{ text: 'first' }, { text: 'second' }] })
      const storeFiber = await ctx.plugin(StorePostgres, { url: database.url(), pollMs: 50 })
      const agentFiber = await ctx.plugin(AgentService, {})
      const store = ctx.get('sessions')!
      expect(store.kind).toBe('postgres')
      const agent = ctx.get('agent')!.create({ id: `agent-${process.pid}` })
      // The header is stored asynchronously (`ready`); following a session before it exists is SESSION_NOT_FOUND.
      await agent.session!.ready
      const live = (async () => {
        const seen: string[] = []
        for await (const event of store.follow(agent.session!.id)) seen.push(event.type)
        return seen
      })()
      await agent.run('hello')
      await agent.session!.close({ reason: 'done' })
      expect(await live).toEqual(['user/message', 'assistant/message', 'run/end', 'session/end'])
      expect((await store.read(agent.session!.id)).events).toEqual(agent.session!.events)
      const resumed = await ctx.get('agent')!.resumeStored(agent.session!.id)
      await resumed.run('again')
      await resumed.session!.close()
      const read = await store.read(agent.session!.id)
      expect(deriveMessages(read.events as SessionEvent[]).map((message) => message.content)).toEqual(['hello', 'first', 'again', 'second'])
      expect((await store.list({ status: 'ended' })).map((summary) => summary.header.id)).toContain(agent.session!.id)
      expect(await connectionsTo(database.admin(), database.url())).toBeGreaterThan(0)
      await agentFiber.dispose()
      await storeFiber.dispose()
      expect(ctx.get('sessions')).toBeUndefined()
      // Every client has sent its Terminate; the server's backends exit on their own time (a loaded machine
      // lags), so wait for the count to reach 0 — a leaked connection never does (10 s hang bound).
      await expect.poll(() => connectionsTo(database.admin(), database.url()), { timeout: 10_000, interval: 20 }).toBe(0)
    })
  })
})
