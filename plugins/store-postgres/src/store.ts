import type pg from 'pg'
import { Client, Pool } from './pg.js'
import {
  SessionStoreError,
  assertNextSeqs,
  assertSessionId,
  followEvents,
  statusOf,
  type FollowOptions,
  type SessionListFilter,
  type SessionStore,
  type SessionSummary,
  type StoredEvent,
  type StoredSession,
  type StoredSessionHeader,
} from '@cordage/services'
import { migrate } from './schema.js'
import { errorMessage } from '@cordage/core'

/** Options of `PostgresSessionStore`. */
export interface PostgresStoreOptions {
  /** A `postgres://` connection string. */
  url: string
  /** Pooled connections (default 10). */
  poolSize?: number
  /** How often `follow` re-reads without a notification (ms, default 250). */
  pollMs?: number
}

const CHANNEL = 'cordage_session_events'
/** The append statement's prepared name (parsed and planned once per connection). */
const APPEND = 'cordage_append'

/**
 * Sessions in PostgreSQL: `cordage_sessions` (one row per session) and `cordage_events` (one row per event,
 * keyed by (session, seq)). `append` is one transaction that locks the session row, checks the seqs,
 * inserts the batch and notifies followers on commit.
 */
export class PostgresSessionStore implements SessionStore {
  readonly kind = 'postgres'
  private readonly pool: pg.Pool
  private readonly pollMs: number
  private readonly listeners = new Map<string, Set<() => void>>()
  /** The last batch notified per followed session (from the notification or this store's own append). */
  private readonly recent = new Map<string, StoredEvent[]>()
  private listener: Promise<pg.Client | undefined> | undefined
  /** The connection `listener` resolved to, while it is listening. */
  private listening: pg.Client | undefined
  private closed = false

  constructor(private readonly options: PostgresStoreOptions) {
    this.pool = new Pool({ Client, connectionString: options.url, max: options.poolSize ?? 10 })
    // An idle pooled connection that dies (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => {})
    this.pollMs = options.pollMs ?? 250
  }

  /** Connects and applies the migrations; returns the schema version found before. */
  async open(): Promise<number> {
    try {
      return await migrate(this.pool)
    } catch (error) {
      throw unavailable(error)
    }
  }

  async create(header: StoredSessionHeader): Promise<void> {
    assertSessionId(header.id)
    const result = await this.query(
      `INSERT INTO cordage_sessions (id, header, created_at, parent, updated_at) VALUES ($1, $2, $3, $4, $3) ON CONFLICT (id) DO NOTHING`,
      [header.id, JSON.stringify(header), header.createdAt, header.parent?.session ?? null],
    )
    if (result.rowCount === 0) throw new SessionStoreError('SESSION_EXISTS', `session ${header.id} already exists`)
  }

  async append(id: string, events: readonly StoredEvent[]): Promise<void> {
    assertSessionId(id)
    if (!events.length) {
      const { rows } = await this.query('SELECT last_seq FROM cordage_sessions WHERE id = $1', [id])
      if (!rows.length) throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id}`)
      return
    }
    // The batch must continue itself one by one; whether it continues the stored session is checked below.
    const first = events[0].seq
    assertNextSeqs(id, first - 1, events)
    const last = events[events.length - 1]
    const texts = events.map((event) => JSON.stringify(event.data))
    const payload = notification(id, events, texts)
    // One statement, so one round trip and its own transaction: it locks the session row (ordering
    // concurrent appenders of one session), and inserts, advances the row and notifies only when the
    // stored last seq is the one this batch continues. The notification is delivered on commit.
    const { rows } = await this.query(
      APPEND,
      `WITH locked AS (SELECT last_seq FROM cordage_sessions WHERE id = $1 FOR UPDATE),
            fits AS (SELECT 1 FROM locked WHERE last_seq = $2),
            inserted AS (
              INSERT INTO cordage_events (session_id, seq, type, time, data)
              SELECT $1, * FROM unnest($3::integer[], $4::text[], $5::text[], $6::json[]) WHERE EXISTS (SELECT 1 FROM fits)
              RETURNING 1),
            advanced AS (
              UPDATE cordage_sessions SET last_seq = $7, updated_at = $8, status = $9
              WHERE id = $1 AND EXISTS (SELECT 1 FROM fits) RETURNING 1),
            notified AS (SELECT pg_notify($10, $11) WHERE EXISTS (SELECT 1 FROM fits))
       SELECT (SELECT last_seq FROM locked) AS last_seq, (SELECT count(*) FROM inserted)::int AS inserted,
              (SELECT count(*) FROM advanced)::int AS advanced, (SELECT count(*) FROM notified)::int AS notified`,
      [
        id,
        first - 1,
        events.map((event) => event.seq),
        events.map((event) => event.type),
        events.map((event) => event.time),
        texts,
        last.seq,
        last.time,
        statusOf(last.type),
        CHANNEL,
        payload,
      ],
    )
    const stored = rows[0]?.last_seq as number | null | undefined
    if (stored === null || stored === undefined) throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id}`)
    // Not the seq this batch continues: nothing was written; the error names the expected seq.
    if (stored !== first - 1) assertNextSeqs(id, stored, events)
    // Followers in this process take the batch as stored (copies made from the stored text) without a read.
    if (this.listeners.has(id))
      this.recent.set(
        id,
        events.map((event, index) => ({ type: event.type, seq: event.seq, time: event.time, data: JSON.parse(texts[index]!) })),
      )
    this.wake(id)
  }

  async read(id: string): Promise<StoredSession> {
    assertSessionId(id)
    // One statement (one round trip, one snapshot): the header as the row of seq 0, then the events.
    const { rows } = await this.query(
      `SELECT header, NULL::text AS type, 0 AS seq, NULL::text AS time, NULL::json AS data FROM cordage_sessions WHERE id = $1
       UNION ALL
       SELECT NULL::json, type, seq, time, data FROM cordage_events WHERE session_id = $1
       ORDER BY seq`,
      [id],
    )
    if (!rows.length || rows[0].seq !== 0) throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id}`)
    const events: StoredEvent[] = []
    for (let index = 1; index < rows.length; index++) {
      const row = rows[index]
      events.push({ type: row.type, seq: row.seq, time: row.time, data: row.data })
    }
    return { header: rows[0].header, events, warnings: [] }
  }

  async list(filter: SessionListFilter = {}): Promise<SessionSummary[]> {
    const where: string[] = []
    const values: unknown[] = []
    const add = (clause: string, value: unknown) => {
      values.push(value)
      where.push(clause.replace('?', `$${values.length}`))
    }
    if (filter.status !== undefined) add('status = ?', filter.status)
    if (filter.since !== undefined) add('created_at >= ?', filter.since)
    if (filter.until !== undefined) add('created_at < ?', filter.until)
    if (filter.parent === null) where.push('parent IS NULL')
    else if (filter.parent !== undefined) add('parent = ?', filter.parent)
    let sql = `SELECT header, status, last_seq, updated_at FROM cordage_sessions${where.length ? ' WHERE ' + where.join(' AND ') : ''} ORDER BY created_at DESC, id DESC`
    if (filter.limit !== undefined) {
      values.push(filter.limit)
      sql += ` LIMIT $${values.length}`
    }
    const { rows } = await this.query(sql, values)
    return rows.map((row) => ({ header: row.header, status: row.status, lastSeq: row.last_seq, updatedAt: row.updated_at }))
  }

  follow(id: string, options: FollowOptions = {}): AsyncIterable<StoredEvent> {
    assertSessionId(id)
    let checked = false
    return followEvents(
      {
        readAfter: async (after) => {
          if (!checked) {
            // LISTEN is in place before the first read: an append after that read is sure to wake this follower.
            await this.listener
            await this.header(id)
          }
          checked = true
          // The batch just notified, when it continues this follower's last event: no read needed.
          const batch = this.recent.get(id)
          if (batch && batch[0]!.seq <= after + 1 && batch[batch.length - 1]!.seq > after) return batch.filter((event) => event.seq > after)
          return this.eventsAfter(id, after)
        },
        subscribe: (wake) => this.subscribe(id, wake),
        pollMs: this.pollMs,
      },
      options.after,
      options.signal,
    )
  }

  /** Ends the pool and the notification connection; later calls fail with `STORE_UNAVAILABLE`. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const listener = await this.listener?.catch(() => undefined)
    await Promise.allSettled([listener?.end(), this.pool.end()])
  }

  private async header(id: string): Promise<StoredSessionHeader> {
    assertSessionId(id)
    const { rows } = await this.query('SELECT header FROM cordage_sessions WHERE id = $1', [id])
    if (!rows.length) throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id}`)
    return rows[0].header
  }

  private async eventsAfter(id: string, after: number): Promise<StoredEvent[]> {
    const { rows } = await this.query('SELECT type, seq, time, data FROM cordage_events WHERE session_id = $1 AND seq > $2 ORDER BY seq', [id, after])
    return rows.map((row) => ({ type: row.type, seq: row.seq, time: row.time, data: row.data }))
  }

  private subscribe(id: string, wake: () => void): () => void {
    const set = this.listeners.get(id) ?? new Set()
    set.add(wake)
    this.listeners.set(id, set)
    this.listener ??= this.listen()
    return () => {
      set.delete(wake)
      if (set.size) return
      this.listeners.delete(id)
      // A follower unsubscribes and subscribes again around each read: forget the batch only once none came back.
      setImmediate(() => {
        if (!this.listeners.has(id)) this.recent.delete(id)
      })
    }
  }

  // One LISTEN connection per store carries every session's notifications; polling covers its absence.
  private async listen(): Promise<pg.Client | undefined> {
    if (this.closed) return undefined
    const client = new Client({ connectionString: this.options.url })
    const lost = () => {
      if (this.listening !== client) return
      this.listening = undefined
      this.listener = undefined
      // Dropped (a server restart, an administrator): notifications sent meanwhile reached nobody, so
      // listen again now and have every follower read what was stored since its last event.
      if (this.closed || !this.listeners.size) return
      this.listener = this.listen()
      void this.listener.then((again) => again && [...this.listeners.keys()].forEach((id) => this.wake(id)))
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (message) => {
      if (!message.payload) return
      const { id, events } = parseNotification(message.payload)
      if (!this.listeners.has(id)) return
      if (events) this.recent.set(id, events)
      this.wake(id)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
      this.listening = client
      return client
    } catch {
      this.listener = undefined
      await client.end().catch(() => {})
      return undefined
    }
  }

  private wake(id: string): void {
    for (const wake of this.listeners.get(id) ?? []) wake()
  }

  private async connect(): Promise<pg.PoolClient> {
    if (this.closed) throw new SessionStoreError('STORE_UNAVAILABLE', 'the PostgreSQL session store is closed')
    try {
      return await this.pool.connect()
    } catch (error) {
      throw unavailable(error)
    }
  }

  /** Runs `sql`; with `name`, as a prepared statement each pooled connection parses and plans once. */
  private async query(sql: string, values: unknown[]): Promise<pg.QueryResult>
  private async query(name: string, sql: string, values: unknown[]): Promise<pg.QueryResult>
  private async query(...args: [string, unknown[]] | [string, string, unknown[]]): Promise<pg.QueryResult> {
    const client = await this.connect()
    try {
      return await (args.length === 2 ? client.query(args[0], args[1]) : client.query({ name: args[0], text: args[1], values: args[2] }))
    } catch (error) {
      throw storeError(error)
    } finally {
      client.release()
    }
  }
}

/** Notification payloads stay under PostgreSQL's 8 000-byte limit; a larger batch notifies its id alone. */
const MAX_PAYLOAD_BYTES = 7900

/**
 * What `append` notifies: the session id, and when it fits, a newline and the batch as stored
 * (`[[seq, type, time, data], …]`, `data` the very text inserted), so followers need no read.
 */
function notification(id: string, events: readonly StoredEvent[], texts: readonly string[]): string {
  let payload = `${id}\n[`
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!
    payload += `${index ? ',' : ''}[${event.seq},${JSON.stringify(event.type)},${JSON.stringify(event.time)},${texts[index]}]`
    if (payload.length > MAX_PAYLOAD_BYTES) return id
  }
  payload += ']'
  return Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES ? id : payload
}

/** A notification's session id and batch (none when it carried the id alone, or a batch that does not parse). */
function parseNotification(payload: string): { id: string; events?: StoredEvent[] } {
  const newline = payload.indexOf('\n')
  if (newline < 0) return { id: payload }
  const id = payload.slice(0, newline)
  try {
    const rows = JSON.parse(payload.slice(newline + 1)) as Array<[number, string, string, StoredEvent['data']]>
    if (!Array.isArray(rows) || !rows.length) return { id }
    const events: StoredEvent[] = []
    for (const row of rows) {
      if (!Array.isArray(row) || typeof row[0] !== 'number' || typeof row[1] !== 'string' || typeof row[2] !== 'string') return { id }
      events.push({ type: row[1], seq: row[0], time: row[2], data: row[3] })
    }
    return { id, events }
  } catch {
    return { id }
  }
}

function unavailable(error: unknown): SessionStoreError {
  return new SessionStoreError('STORE_UNAVAILABLE', `PostgreSQL session store unavailable: ${errorMessage(error)}`, { cause: error })
}

/** Our coded errors pass; a database error becomes `STORE_UNAVAILABLE` with the server's message. */
function storeError(error: unknown): Error {
  return error instanceof SessionStoreError ? error : unavailable(error)
}
