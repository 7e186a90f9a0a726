import type pg from 'pg'
import { Client } from '../src/pg.js'
import { afterAll, beforeAll } from 'vitest'

/** The server the tests use (`scripts/services.sh start` exports it); the tests skip without it. */
export const serverUrl = process.env.CORDAGE_TEST_POSTGRES_URL

/** A fresh database for this test file, dropped afterwards; `url()` is its connection string. */
export function freshDatabase(): { url(): string; admin(): pg.Client } {
  const name = `cordage_test_${process.pid}_${Math.random().toString(16).slice(2, 8)}`
  let admin: pg.Client
  let url = ''
  beforeAll(async () => {
    admin = new Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    const parsed = new URL(serverUrl!)
    parsed.pathname = `/${name}`
    url = parsed.toString()
  }, 60_000)
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }, 60_000)
  return { url: () => url, admin: () => admin }
}

/** Connections open to database `url` other than the caller's. */
export async function connectionsTo(admin: pg.Client, url: string): Promise<number> {
  const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
    new URL(url).pathname.slice(1),
  ])
  return rows[0].n
}
