import { isAbsolute, relative, resolve } from 'node:path'
import { realpathSync } from 'node:fs'
import { Hono, type Context as HonoContext } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { CordageError, errorMessage } from '@cordage/core'
import { assertSessionId, type SessionListFilter, type SessionStore } from '@cordage/services'
import { ServerError, statusOf } from './errors.js'
import { eventStream } from './events-stream.js'
import type { RunLauncher, RunRequest } from './launcher.js'
import { openApiDocument } from './openapi.js'
import { guard } from './security.js'
import { SessionView } from './session-view.js'
import { placeholderPage, serveAsset, type StudioAssets } from './assets.js'

/** What the API is built from. */
export interface AppOptions {
  /** The session store (`ctx.sessions`), read per request so a reloaded store is picked up. */
  store: () => SessionStore
  launcher: RunLauncher
  /** The directory cassettes must be inside. */
  cwd: string
  /** The `Host` values accepted (computed once the port is known). */
  hosts: () => Set<string>
  token?: string
  /** Largest request body in bytes (default 1 MB). */
  bodyLimit?: number
  /** SSE streams open at once (default 1024); more are refused with 503 `TOO_MANY_STREAMS`. */
  maxStreams?: number
  /** Characters of live messages a stream holds for a client that does not read before disconnecting it (default 1 MiB). */
  maxLiveBacklog?: number
  /** The studio's files; without them `GET /` is a placeholder page. */
  assets?: StudioAssets
}

const SESSION_STATUSES = new Set(['running', 'waiting', 'ended'])

function errorBody(code: string, message: string) {
  return { error: { code, message } }
}

/** The Hono app of `cordage serve`: every route of the API contract (see README and `/api/openapi.json`). */
export function createApp(options: AppOptions): Hono {
  const app = new Hono()
  const { launcher } = options
  const view = new SessionView(options.store, launcher)
  const maxBody = options.bodyLimit ?? 1_000_000
  let streams = 0

  app.onError((error, c) => {
    if (CordageError.is(error)) return c.json(errorBody(error.code, error.message), statusOf(error.code) as 400)
    return c.json(errorBody('INTERNAL', 'the server failed to answer; see its log'), 500)
  })
  app.notFound((c) => c.json(errorBody('NOT_FOUND', `no route ${c.req.method} ${c.req.path}; GET /api/openapi.json lists them`), 404))
  app.use('*', guard({ hosts: options.hosts, token: options.token }))
  app.use('/api/*', bodyLimit({ maxSize: maxBody, onError: (c) => c.json(errorBody('PAYLOAD_TOO_LARGE', `the request body is over ${maxBody} bytes`), 413) }))

  app.get('/', (c) => (options.assets ? serveAsset(c, options.assets, 'index.html') : c.html(placeholderPage())))
  app.get('/studio/*', (c) => (options.assets ? serveAsset(c, options.assets, c.req.path.slice('/studio/'.length)) : c.notFound()))
  app.get('/api/health', (c) => c.json({ ok: true }))
  app.get('/api/openapi.json', (c) => c.json(openApiDocument()))

  app.get('/api/sessions', async (c) => c.json(await view.list(listFilter(c))))
  app.get('/api/sessions/:id', async (c) => c.json(await options.store().read(sessionId(c))))
  app.get('/api/sessions/:id/events', async (c) => {
    const id = sessionId(c)
    const after = afterOf(c)
    const store = options.store()
    // Unknown sessions are a JSON 404 before any stream starts.
    const last = (await store.read(id)).events.at(-1)
    const lastSeq = last?.seq ?? 0
    // Seqs only grow, so a cursor past the last one names no event this session stored.
    if (after > lastSeq) throw new ServerError('INVALID_QUERY', `Last-Event-ID / after: got ${after}, but the session's last stored event is ${lastSeq}`)
    if (streams >= (options.maxStreams ?? 1024)) throw new ServerError('TOO_MANY_STREAMS', 'too many event streams are open; close one and retry')
    streams++
    // A client that already has session/end has the whole session: it gets `end`, not a stream waiting for an event that never comes.
    const ended = last?.type === 'session/end' && after === lastSeq
    return eventStream(c, { store, launcher, id, after, ended, maxLiveBacklog: options.maxLiveBacklog, onClose: () => streams-- })
  })

  app.post('/api/runs', async (c) => {
    const request = runRequest(await jsonBody(c), options.cwd)
    const { id } = await launcher.start(request)
    return c.json({ id, url: `/api/sessions/${id}` }, 202)
  })
  app.get('/api/runs/:id/pending', async (c) => {
    const id = sessionId(c)
    return c.json(
      await ifLive(
        () => launcher.pending(id),
        async () => (await exists(options.store(), id), []),
      ),
    )
  })
  app.post('/api/runs/:id/answers', async (c) => {
    const id = sessionId(c)
    const body = (await jsonBody(c)) as { requestId?: unknown; answer?: unknown }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new ServerError('INVALID_BODY', 'expected { requestId, answer }')
    await ifLive(
      () => launcher.answer(id, body.requestId, body.answer),
      () => ended(id),
    )
    return c.json({ ok: true })
  })
  app.post('/api/runs/:id/cancel', async (c) => {
    const id = sessionId(c)
    await ifLive(
      () => launcher.cancel(id),
      () => ended(id),
    )
    return c.json({ ok: true }, 202)
  })

  async function ended(id: string): Promise<never> {
    await exists(options.store(), id)
    throw new ServerError('RUN_ENDED', `run ${id} is not running any more`)
  }
  return app
}

/** `RUN_NOT_FOUND` from the launcher becomes `otherwise()`: the session may exist and be over. */
async function ifLive<T>(action: () => Promise<T>, otherwise: () => Promise<T>): Promise<T> {
  try {
    return await action()
  } catch (error) {
    if (CordageError.is(error) && error.code === 'RUN_NOT_FOUND') return otherwise()
    throw error
  }
}

/** Throws `SESSION_NOT_FOUND` (404) unless the store has session `id`. */
async function exists(store: SessionStore, id: string): Promise<void> {
  await store.read(id)
}

function sessionId(c: HonoContext): string {
  const id = c.req.param('id')
  try {
    assertSessionId(id)
  } catch (error) {
    throw new ServerError('INVALID_SESSION_ID', errorMessage(error))
  }
  return id
}

function afterOf(c: HonoContext): number {
  const raw = c.req.header('last-event-id') ?? c.req.query('after')
  if (raw === undefined || raw === '') return 0
  if (!/^\d{1,15}$/.test(raw)) throw new ServerError('INVALID_QUERY', `Last-Event-ID / after: expected a stored event's seq, got ${JSON.stringify(raw)}`)
  return Number(raw)
}

function listFilter(c: HonoContext): SessionListFilter {
  const filter: SessionListFilter = {}
  const { status, parent, since, until, limit } = c.req.query()
  if (status !== undefined) {
    if (!SESSION_STATUSES.has(status)) throw new ServerError('INVALID_QUERY', `status: expected running, waiting or ended, got ${JSON.stringify(status)}`)
    filter.status = status as 'running' | 'waiting' | 'ended'
  }
  if (parent !== undefined) filter.parent = parent === 'none' ? null : parent
  for (const [key, value] of [
    ['since', since],
    ['until', until],
  ] as const) {
    if (value === undefined) continue
    if (Number.isNaN(Date.parse(value))) throw new ServerError('INVALID_QUERY', `${key}: expected an ISO time, got ${JSON.stringify(value)}`)
    filter[key] = new Date(value).toISOString()
  }
  if (limit !== undefined) {
    if (!/^\d{1,6}$/.test(limit)) throw new ServerError('INVALID_QUERY', `limit: expected a whole number, got ${JSON.stringify(limit)}`)
    filter.limit = Number(limit)
  }
  return filter
}

async function jsonBody(c: HonoContext): Promise<unknown> {
  const text = await c.req.text()
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new ServerError('INVALID_JSON', `the body is not JSON: ${errorMessage(error)}`)
  }
}

function fail(message: string): never {
  throw new ServerError('INVALID_BODY', message)
}

function runRequest(body: unknown, cwd: string): RunRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) fail('expected { prompt, options?, cassette? }')
  const { prompt, options, cassette, ...rest } = body as Record<string, unknown>
  const unknown = Object.keys(rest)
  if (unknown.length) fail(`unknown field ${JSON.stringify(unknown[0])}; expected prompt, options, cassette`)
  if (typeof prompt !== 'string' || !prompt.trim()) fail('prompt: expected a non-empty string')
  const request: RunRequest = { prompt: prompt as string }
  if (options !== undefined) {
    if (!options || typeof options !== 'object' || Array.isArray(options)) fail('options: expected { maxTurns?, system? }')
    const { maxTurns, system, ...others } = options as Record<string, unknown>
    if (Object.keys(others).length) fail(`options: unknown field ${JSON.stringify(Object.keys(others)[0])}; expected maxTurns, system`)
    if (maxTurns !== undefined && (!Number.isInteger(maxTurns) || (maxTurns as number) < 1 || (maxTurns as number) > 1000))
      fail('options.maxTurns: expected a whole number from 1 to 1000')
    if (system !== undefined && typeof system !== 'string') fail('options.system: expected a string')
    request.options = { ...(maxTurns !== undefined && { maxTurns: maxTurns as number }), ...(system !== undefined && { system: system as string }) }
  }
  if (cassette !== undefined) {
    if (typeof cassette !== 'string' || !cassette) fail('cassette: expected a file path inside the working directory')
    request.cassette = insideCwd(cassette as string, cwd)
  }
  return request
}

/** The real path of `file` (relative to `cwd`), refused unless it is inside `cwd` once symlinks are resolved. */
function insideCwd(file: string, cwd: string): string {
  let real: string
  let root: string
  try {
    root = realpathSync(cwd)
    real = realpathSync(resolve(cwd, file))
  } catch {
    throw new ServerError('INVALID_CASSETTE', `cassette ${JSON.stringify(file)}: no such file in the working directory`)
  }
  const path = relative(root, real)
  if (path === '' || path.startsWith('..') || isAbsolute(path))
    throw new ServerError('INVALID_CASSETTE', `cassette ${JSON.stringify(file)}: must be a file inside the working directory`)
  return real
}
