import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import type { Context } from 'cordis'
import type { ModelService, SessionStore } from '@cordage/services'
import { createApp } from './app.js'
import type { StudioAssets } from './assets.js'
import { ServerError } from './errors.js'
import type { RunLauncher } from './launcher.js'
import { LocalRunLauncher } from './local-launcher.js'
import { allowedHosts, isLoopback } from './security.js'
import { errorMessage } from '@cordage/core'

/** Options of `startServer`. */
export interface ServerOptions {
  /** A Context with `ctx.sessions` (and, for local runs, `tools` and usually `model`). */
  ctx: Context
  /** Working directory: new sessions record it and cassettes must be inside it (default `process.cwd()`). */
  cwd?: string
  /** Default `127.0.0.1`; any other address needs `token`. */
  host?: string
  /** Default 0: the system picks a free port. */
  port?: number
  /** The bearer token every `/api/*` request must carry (required for a non-loopback host). */
  token?: string
  /** Largest request body in bytes (default 1 000 000). */
  bodyLimit?: number
  /** SSE streams open at once (default 1024). */
  maxStreams?: number
  /**
   * Characters of live messages (deltas, pending, resolved) one event stream holds for a client that does
   * not read, before that client is disconnected (default 1 MiB; it resumes with `Last-Event-ID`).
   */
  maxLiveBacklog?: number
  /** The studio (`studioAssets()` of `@cordage/studio`); without it `GET /` is a placeholder page. */
  assets?: StudioAssets
  /** Where runs execute; default a `LocalRunLauncher` on `ctx` with `local`'s options. */
  launcher?: RunLauncher
  /** Options of the default launcher. */
  local?: { system?: string; maxTurns?: number; maxRuns?: number; cassette?: (file: string) => ModelService | Promise<ModelService> }
}

/** A running server. */
export interface CordageServer {
  /** `http://<host>:<port>` (the address to print and open). */
  readonly url: string
  readonly port: number
  readonly launcher: RunLauncher
  /** Cancels the runs (their sessions end), closes every connection and stops listening. Idempotent. */
  close(): Promise<void>
}

/** Starts the API on `host:port`; refuses (`TOKEN_REQUIRED`) a non-loopback host without a token. */
export async function startServer(options: ServerOptions): Promise<CordageServer> {
  const host = options.host ?? '127.0.0.1'
  if (!isLoopback(host) && !options.token)
    throw new ServerError(
      'TOKEN_REQUIRED',
      `binding ${host} exposes the API beyond this machine: set a bearer token (CORDAGE_SERVE_TOKEN or serve: { token } in cordage.yml)`,
    )
  if (options.token !== undefined && options.token.length < 16) throw new ServerError('TOKEN_TOO_SHORT', 'the bearer token must be at least 16 characters')
  const store = (): SessionStore => {
    const sessions = options.ctx.get('sessions')
    if (!sessions) throw new ServerError('STORE_UNAVAILABLE', 'no session store (ctx.sessions) is loaded')
    return sessions
  }
  store()
  const cwd = options.cwd ?? process.cwd()
  const launcher = options.launcher ?? (await LocalRunLauncher.create(options.ctx, { cwd, ...options.local }))
  let hosts = new Set<string>()
  const app = createApp({
    store,
    launcher,
    cwd,
    hosts: () => hosts,
    token: options.token,
    bodyLimit: options.bodyLimit,
    maxStreams: options.maxStreams,
    maxLiveBacklog: options.maxLiveBacklog,
    assets: options.assets,
  })
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    await launcher.close()
    throw new ServerError('LISTEN_FAILED', `cannot listen on ${host}:${options.port ?? 0}: ${errorMessage(error)}`, { cause: error })
  }
  const port = (server.address() as AddressInfo).port
  hosts = allowedHosts(host, port)
  const shown = host.includes(':') ? `[${host}]` : host
  let closing: Promise<void> | undefined
  return {
    url: `http://${shown}:${port}`,
    port,
    launcher,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        // Ending the runs first lets their streams send `session/end` and `end` before the sockets go.
        await launcher.close()
        server.closeAllConnections()
        await stopped
      })()
      return closing
    },
  }
}
