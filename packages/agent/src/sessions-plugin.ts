import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import { JsonlSessionStore } from './jsonl-store.js'

/** Config of the JSONL `sessions` plugin. */
export interface JsonlSessionsConfig {
  /** Sessions directory, relative to `cwd` (default `.cordage/sessions`). */
  dir?: string
  /** Working directory (default `process.cwd()`). */
  cwd?: string
  /** How often `follow` re-reads a file without an in-process wake (ms). */
  pollMs: number
}

/** The embedded session store as a plugin: provides `ctx.sessions` over the JSONL files. */
export const JsonlSessions = {
  name: 'sessions-jsonl',
  inject: [] as string[],
  Config: strictConfig(
    'sessions-jsonl',
    Schema.object({
      dir: Schema.string().description('Sessions directory, relative to cwd (default .cordage/sessions).'),
      cwd: Schema.string().description('Working directory (default: process.cwd()).'),
      pollMs: Schema.natural().min(10).default(250).description('How often follow re-reads a file written by another process (ms).'),
    }),
  ) as Schema<ConfigInput<JsonlSessionsConfig>, JsonlSessionsConfig>,
  apply(ctx: Context, config: JsonlSessionsConfig): void {
    ctx.provide('sessions', new JsonlSessionStore(config))
  },
}
