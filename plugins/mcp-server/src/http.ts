import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ToolRegistry } from '@cordage/registry'
import { coalesce, createMcpServer, type McpEndpoint, type ServerInfo } from './server.js'

/** Where the Streamable HTTP endpoint listens. */
export interface HttpOptions {
  host: string
  port: number
  path: string
  /** Largest accepted request body in bytes. */
  maxBodyBytes: number
}

/** A listening HTTP endpoint and its URL (the real port when `port` was 0). */
export interface HttpEndpoint extends McpEndpoint {
  url: string
  port: number
}

interface Session {
  transport: StreamableHTTPServerTransport
  server: Server
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1'])

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }))
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

/** Serves `tools` over MCP Streamable HTTP: one stateful session (and MCP `Server`) per client. */
export async function serveHttp(tools: ToolRegistry, info: ServerInfo, options: HttpOptions): Promise<HttpEndpoint> {
  const sessions = new Map<string, Session>()
  let allowedHosts: string[] | undefined
  const http = createServer(
    (req, res) =>
      void handle(req, res).catch((error) => {
        if (!res.headersSent) reply(res, error instanceof RangeError ? 413 : error instanceof SyntaxError ? 400 : 500, String(error?.message ?? error))
      }),
  )

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (new URL(req.url ?? '/', 'http://host').pathname !== options.path) return reply(res, 404, `not found; the MCP endpoint is ${options.path}`)
    const body = req.method === 'POST' ? await readJson(req, options.maxBodyBytes) : undefined
    const id = req.headers['mcp-session-id']
    let session = typeof id === 'string' ? sessions.get(id) : undefined
    if (!session) {
      if (id !== undefined) return reply(res, 404, 'unknown MCP session; initialize a new one')
      if (req.method !== 'POST' || !isInitializeRequest(body)) return reply(res, 400, 'no MCP session; send an initialize request first')
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
        ...(allowedHosts && { enableDnsRebindingProtection: true, allowedHosts }),
      })
      const created: Session = { transport, server: createMcpServer(tools, info) }
      // The SDK transport exposes a callback property, not an EventTarget.
      // oxlint-disable-next-line unicorn/prefer-add-event-listener
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId)
      }
      await created.server.connect(transport)
      session = created
    }
    await session.transport.handleRequest(req, res, body)
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(options.port, options.host, () => resolve())
  })
  const port = (http.address() as AddressInfo).port
  // Loopback endpoints refuse other Host headers (DNS rebinding protection).
  // A Host header carries an IPv6 address in brackets, with or without the port (`[::1]`, `[::1]:8080`).
  if (LOOPBACK.has(options.host)) {
    allowedHosts = [...LOOPBACK].flatMap((host) => {
      const named = host.includes(':') ? `[${host}]` : host
      return [...new Set([host, named, `${named}:${port}`])]
    })
  }
  const hostPart = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${hostPart}:${port}${options.path}`,
    port,
    toolsChanged: coalesce(() => {
      for (const { server } of sessions.values()) void server.sendToolListChanged().catch(() => {})
    }),
    async close() {
      await Promise.all([...sessions.values()].map(({ server }) => server.close().catch(() => {})))
      sessions.clear()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
