import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { Context } from 'cordis'
import { CordageError, errorMessage } from '@cordage/core'
import type { SessionStore, StoredSession } from '@cordage/services'
import { readConfig } from '../config.js'
import { CliError, EXIT } from '../errors.js'
import type { CommandInput } from './command.js'

/** More child sessions than this (subagents of subagents…) are left out of one export, with a warning. */
const MAX_CHILDREN = 1000

/**
 * `cordage replay --html <session> [--out <file>]`: the session and its child sessions, read from the
 * configured store (cordage.yml `store:`, else the JSONL files; a `.jsonl` path reads that file's
 * directory), written as one self-contained HTML page. Prints the file's path.
 */
export async function replayHtml(target: string, input: CommandInput, out: string | undefined, configFile: string | undefined): Promise<number> {
  const { cwd, output } = input
  const { renderSessionHtml } = await import('@cordage/studio')
  const opened = await openStore(target, cwd, configFile)
  try {
    const session = await readSession(opened.store, opened.id)
    for (const warning of session.warnings) output.error(output.style('yellow', `session: ${warning}`))
    const children = await readChildren(opened.store, session.header.id, (message) => output.error(output.style('yellow', message)))
    const file = resolve(cwd, out ?? `${session.header.id}.html`)
    // Written beside the target and renamed over it: a reader never sees half a page.
    const temporary = resolve(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
    try {
      writeFileSync(temporary, renderSessionHtml(session, children), { mode: 0o644 })
      renameSync(temporary, file)
    } catch (error) {
      rmSync(temporary, { force: true })
      throw new CliError(`cannot write ${file}: ${errorMessage(error)}`, EXIT.failed, 'WRITE_FAILED')
    }
    output.line(file)
    return EXIT.ok
  } finally {
    await opened.close()
  }
}

async function openStore(target: string, cwd: string, configFile: string | undefined): Promise<{ store: SessionStore; id: string; close(): Promise<void> }> {
  const { JsonlSessionStore } = await import('@cordage/agent')
  if (target.endsWith('.jsonl') || target.includes('/') || target.includes('\\')) {
    const file = resolve(cwd, target)
    return { store: new JsonlSessionStore({ dir: dirname(file) }), id: basename(file, '.jsonl'), close: async () => {} }
  }
  const postgres = readConfig(cwd, configFile)?.store?.postgres
  if (!postgres) return { store: new JsonlSessionStore({ cwd }), id: target, close: async () => {} }
  const { default: StorePostgres } = await import('@cordage/plugin-store-postgres')
  const ctx = new Context()
  const fiber = await ctx.plugin(StorePostgres, { url: postgres })
  const store = ctx.get('sessions')
  if (!store) throw new CliError('the PostgreSQL session store did not start', EXIT.failed, 'STORE_UNAVAILABLE')
  return { store, id: target, close: () => Promise.resolve(fiber.dispose()).then(() => undefined) }
}

async function readSession(store: SessionStore, id: string): Promise<StoredSession> {
  try {
    return await store.read(id)
  } catch (error) {
    if (CordageError.is(error) && (error.code === 'SESSION_NOT_FOUND' || error.code === 'INVALID_SESSION_ID'))
      throw new CliError(`${error.message}; \`cordage replay --html <session id or .jsonl file>\``, EXIT.failed, error.code)
    throw error
  }
}

/** Every descendant session of `id` (children first by creation), each read once: a cycle of headers ends. */
async function readChildren(store: SessionStore, id: string, warn: (message: string) => void): Promise<StoredSession[]> {
  const children: StoredSession[] = []
  const seen = new Set([id])
  const queue = [id]
  while (queue.length > 0) {
    const parent = queue.shift()!
    for (const summary of (await store.list({ parent })).toReversed()) {
      if (seen.has(summary.header.id)) continue
      if (children.length >= MAX_CHILDREN) {
        warn(`session ${id} has more than ${MAX_CHILDREN} child sessions; the export holds the first ${MAX_CHILDREN}`)
        return children
      }
      seen.add(summary.header.id)
      children.push(await store.read(summary.header.id))
      queue.push(summary.header.id)
    }
  }
  return children
}
