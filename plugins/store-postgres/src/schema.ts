import type pg from 'pg'

/** The migrations, in order; `cordage_schema_version` records which ran. Never edit one that shipped: add the next. */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE cordage_sessions (
     id text PRIMARY KEY,
     header json NOT NULL,
     created_at text NOT NULL,
     parent text,
     status text NOT NULL DEFAULT 'running',
     last_seq integer NOT NULL DEFAULT 0,
     updated_at text NOT NULL
   );
   CREATE INDEX cordage_sessions_created ON cordage_sessions (created_at DESC, id DESC);
   CREATE INDEX cordage_sessions_parent ON cordage_sessions (parent);
   CREATE TABLE cordage_events (
     session_id text NOT NULL REFERENCES cordage_sessions (id) ON DELETE CASCADE,
     seq integer NOT NULL,
     type text NOT NULL,
     time text NOT NULL,
     data json NOT NULL,
     PRIMARY KEY (session_id, seq)
   );`,
]

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length

// Any constant shared by every Cordage process: concurrent starters migrate one at a time.
const MIGRATION_LOCK = 0x636f7264

/**
 * Brings the database to `SCHEMA_VERSION` in one transaction under an advisory lock, so two processes
 * starting together do not both migrate. A database newer than this code is refused rather than written.
 */
export async function migrate(pool: pg.Pool): Promise<number> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query('CREATE TABLE IF NOT EXISTS cordage_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM cordage_schema_version')
    const current = rows[0]?.version ?? 0
    if (current > SCHEMA_VERSION)
      throw new Error(`the database has session schema version ${current}; this code knows up to ${SCHEMA_VERSION}: upgrade @cordage/plugin-store-postgres`)
    for (let version = current + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1])
      await client.query('INSERT INTO cordage_schema_version (version) VALUES ($1)', [version])
    }
    await client.query('COMMIT')
    return current
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}
