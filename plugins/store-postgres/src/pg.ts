import type pg from 'pg'
// @ts-expect-error: pg publishes no types for this subpath (they are pg's `Client`)
import ClientModule from 'pg/lib/client.js'
// @ts-expect-error: pg-pool publishes no types (its class is pg's `Pool`)
import PoolModule from 'pg-pool'

// pg's own entry builds its Pool by requiring pg-pool, which resolves to pg-pool's ES module wrapper
// when the process runs with an `import` resolve condition (as the test runner does) and then fails
// to load. Taking the client and the pool from their own modules works under either condition.
/** pg's `Client`. */
export const Client = ClientModule as typeof pg.Client
/** pg's `Pool` bound to that client. */
export const Pool = PoolModule as new (options: pg.PoolConfig & { Client: typeof pg.Client }) => pg.Pool
