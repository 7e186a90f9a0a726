import type pg from 'pg'
import { Client, Pool } from './pg.js'
import {
  SessionStoreError,
  assertNextSeqs,
  assertSessionId,
  followEvents,
  type FollowOptions,
  type SessionListFilter,
  type SessionStore,
  type SessionSummary,
  type StoredEvent,
  type StoredSession,
  type StoredSessionHeader,
} from '@cordage/services'
import { migrate } from './schema.js'

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
  private listener: Promise<pg.Client | undefined> | undefined
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
    const client = await this.connect()
    try {
      await client.query('BEGIN')
      // The row lock orders concurrent appenders of one session; other sessions never wait on it.
      const { rows } = await client.query<{ last_seq: number }>('SELECT last_seq FROM cordage_sessions WHERE id = $1 FOR UPDATE', [id])
      if (!rows.length) throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id}`)
      assertNextSeqs(id, rows[0].last_seq, events)
      if (events.length) {
        await client.query(
          `INSERT INTO cordage_events (session_id, seq, type, time, data)
           SELECT $1, * FROM unnest($2::integer[], $3::text[], $4::text[], $5::json[])`,
          [
            id,
            events.map((event) => event.seq),
            events.map((event) => event.type),
            events.map((event) => event.time),
            events.map((event) => JSON.stringify(event.data)),
          ],
        )
        const last = events[events.length - 1]
        await client.query(`UPDATE cordage_sessions SET last_seq = $2, updated_at = $3, status = CASE WHEN $4 THEN 'ended' ELSE 'running' END WHERE id = $1`, [
          id,
          last.seq,
          last.time,
          last.type === 'session/end',
        ])
        await client.query('SELECT pg_notify($1, $2)', [CHANNEL, id])
      }
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw storeError(error)
    } finally {
      client.release()
    }
    this.wake(id)
  }

  async read(id: string): Promise<StoredSession> {
    const header = await this.header(id)
    return { header, events: await this.eventsAfter(id, 0), warnings: [] }
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
          if (!checked) await this.header(id)
          checked = true
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
      if (!set.size) this.listeners.delete(id)
    }
  }

  // One LISTEN connection per store carries every session's notifications; polling covers its absence.
  private async listen(): Promise<pg.Client | undefined> {
    if (this.closed) return undefined
    const client = new Client({ connectionString: this.options.url })
    client.on('error', () => {
      this.listener = undefined
    })
    client.on('notification', (message) => {
      if (message.payload) this.wake(message.payload)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
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

  private async query(sql: string, values: unknown[]): Promise<pg.QueryResult> {
    const client = await this.connect()
    try {
      return await client.query(sql, values)
    } catch (error) {
      throw storeError(error)
    } finally {
      client.release()
    }
  }
}

function unavailable(error: unknown): SessionStoreError {
  return new SessionStoreError('STORE_UNAVAILABLE', `PostgreSQL session store unavailable: ${(error as Error)?.message ?? String(error)}`, { cause: error })
}

/** Our coded errors pass; a database error becomes `STORE_UNAVAILABLE` with the server's message. */
function storeError(error: unknown): Error {
  return error instanceof SessionStoreError ? error : unavailable(error)
}
