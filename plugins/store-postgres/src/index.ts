import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import { PostgresSessionStore } from './store.js'

/** Plugin name. */
export const name = 'store-postgres'
/** Services it needs (none). */
export const inject: string[] = []
/** Plugin configuration (see the README's Config table). */
export interface Config {
  url: string
  poolSize: number
  pollMs: number
}
/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG naming the plugin and key. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    url: Schema.string().required().description('A postgres:// connection string.'),
    poolSize: Schema.natural().min(1).default(10).description('Pooled connections.'),
    pollMs: Schema.natural().min(10).default(250).description('How often follow re-reads without a notification (ms).'),
  }),
)
/** Connects, migrates the schema and provides `ctx.sessions`; unloading closes every connection. */
export async function apply(ctx: Context, config: Config): Promise<void> {
  const store = new PostgresSessionStore(config)
  try {
    await store.open()
  } catch (error) {
    await store.close()
    throw error
  }
  ctx.effect(() => () => store.close(), 'postgres session store')
  ctx.provide('sessions', store)
}

export { PostgresSessionStore, type PostgresStoreOptions } from './store.js'
export { SCHEMA_VERSION } from './schema.js'
/** The plugin as one object. */
export default { name, inject, Config, apply }
