import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { ToolRegistry } from '@cordage/registry'
import { requestGuard } from './guard.js'
import { coalesce, createMcpServer, type McpEndpoint, type ServerInfo } from './server.js'
import { SessionTable, type McpSession } from './sessions.js'

/** Where the Streamable HTTP endpoint listens, and what it accepts. */
export interface HttpOptions {
  host: string
  port: number
  path: string
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number
  /** Sessions open at once (default 100); an initialize past it gets 503 `MCP_SESSION_LIMIT`. */
  maxSessions?: number
  /** A session with no request open this long is closed (default 30 minutes). */
  sessionIdleMs?: number
  /** More accepted `Host` header values (see `requestGuard`). */
  allowedHosts?: readonly string[]
  /** Origins whose browser pages may call the endpoint (default none). */
  allowedOrigins?: readonly string[]
}

/** A listening HTTP endpoint and its URL (the real port when `port` was 0). */
export interface HttpEndpoint extends McpEndpoint {
  url: string
  port: number
}

function reply(res: ServerResponse, status: number, message: string, id: unknown = null): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id }))
}

async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw new RangeError(`request body over ${limit} bytes`)
    chunks.push(chunk as Buffer)
  }
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined
}

/** Serves `tools` over MCP Streamable HTTP: one stateful session (and MCP `Server`) per client, capped and expiring when idle. */
export async function serveHttp(tools: ToolRegistry, info: ServerInfo, options: HttpOptions): Promise<HttpEndpoint> {
  const maxSessions = options.maxSessions ?? 100
  const sessions = new SessionTable({ maxSessions, sessionIdleMs: options.sessionIdleMs ?? 30 * 60_000 })
  // Set once the port is known (a guard's loopback Host names carry it).
  let refused: ReturnType<typeof requestGuard> | undefined
  const http = createServer(
    (req, res) =>
      void handle(req, res).catch((error) => {
        if (!res.headersSent) reply(res, error instanceof RangeError ? 413 : error instanceof SyntaxError ? 400 : 500, String(error?.message ?? error))
      }),
  )

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://host').pathname !== options.path) return reply(res, 404, `not found; the MCP endpoint is ${options.path}`)
    // Before any body is read or session touched.
    const reason = refused ? refused(req) : 'MCP_HOST_REFUSED: the endpoint is still starting'
    if (reason) return reply(res, 403, reason)
    const body = req.method === 'POST' ? await readJson(req, options.maxBodyBytes) : undefined
    const id = req.headers['mcp-session-id']
    let session = typeof id === 'string' ? sessions.get(id) : undefined
    if (!session) {
      if (id !== undefined) return reply(res, 404, 'unknown MCP session (it ended or expired); initialize a new one')
      if (req.method !== 'POST' || !isInitializeRequest(body)) return reply(res, 400, 'no MCP session; send an initialize request first')
      if (!sessions.admit()) {
        const message = `MCP_SESSION_LIMIT: this server already has ${maxSessions} MCP sessions (maxSessions); end one with an HTTP DELETE carrying its Mcp-Session-Id, or retry once idle sessions have expired`
        return reply(res, 503, message, (body as { id?: unknown }).id ?? null)
      }
      session = await open()
    }
    const current = session
    sessions.begin(current)
    res.once('close', () => sessions.end(current))
    await current.transport.handleRequest(req, res, body)
  }

  async function open(): Promise<McpSession> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => sessions.register(session, sessionId),
    })
    const session: McpSession = { transport, server: createMcpServer(tools, info), open: 0, state: 'pending' }
    // The SDK transport exposes a callback property, not an EventTarget.
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    transport.onclose = () => sessions.remove(session)
    try {
      await session.server.connect(transport)
    } catch (error) {
      sessions.remove(session)
      throw error
    }
    return session
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, options.host, () => resolve())
  })
  const port = (http.address() as AddressInfo).port
  refused = requestGuard({ host: options.host, port, allowedHosts: options.allowedHosts, allowedOrigins: options.allowedOrigins })
  const hostPart = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${hostPart}:${port}${options.path}`,
    port,
    toolsChanged: coalesce(() => {
      for (const { server } of sessions.sessions()) void server.sendToolListChanged().catch(() => {})
    }),
    async close() {
      await sessions.closeAll()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
