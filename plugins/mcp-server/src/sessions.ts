import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

/** How many HTTP sessions may live at once, and how long one may sit with no request open. */
export interface SessionLimits {
  maxSessions: number
  sessionIdleMs: number
}

/** One client's stateful Streamable HTTP session and the MCP `Server` answering it. */
export interface McpSession {
  transport: StreamableHTTPServerTransport
  server: Server
  /** Requests of this session still open (a GET event stream stays open while the client listens). */
  open: number
  /** `pending` until the initialize answer gave it an id, then `live`, then `gone`. */
  state: 'pending' | 'live' | 'gone'
  id?: string
  idle?: NodeJS.Timeout
}

/**
 * The endpoint's sessions. At most `maxSessions` exist at once, those still initialising included, so a
 * flood of initialize requests cannot run past the cap while their answers are in flight. A live
 * session with no request open for `sessionIdleMs` is closed (its client gets 404 and may initialize
 * again); one with a request open, such as the event stream a client listens on, never idles.
 */
export class SessionTable {
  private readonly live = new Map<string, McpSession>()
  private pending = 0

  constructor(private readonly limits: SessionLimits) {}

  /** The live session `id`. */
  get(id: string): McpSession | undefined {
    return this.live.get(id)
  }

  /** Every live session. */
  sessions(): IterableIterator<McpSession> {
    return this.live.values()
  }

  /** Counts a session about to initialize; false when the table is full (nothing is counted then). */
  admit(): boolean {
    if (this.live.size + this.pending >= this.limits.maxSessions) return false
    this.pending++
    return true
  }

  /** The session got its id (the SDK's `onsessioninitialized`). */
  register(session: McpSession, id: string): void {
    if (session.state !== 'pending') return
    this.pending--
    session.state = 'live'
    session.id = id
    this.live.set(id, session)
  }

  /** A request of `session` starts: it is not idle while any is open. */
  begin(session: McpSession): void {
    session.open++
    clearTimeout(session.idle)
  }

  /** A request of `session` ended (answered, or its connection dropped). */
  end(session: McpSession): void {
    if (--session.open > 0) return
    if (session.state === 'live') {
      session.idle = setTimeout(() => void session.server.close().catch(() => {}), this.limits.sessionIdleMs)
      // An idle session must not keep the process alive on its own.
      session.idle.unref()
    } else if (session.state === 'pending') {
      // Its initialize request ended without an id (refused or malformed): its slot is free again.
      this.pending--
      session.state = 'gone'
      void session.server.close().catch(() => {})
    }
  }

  /** The session's transport closed (client DELETE, expiry, shutdown). */
  remove(session: McpSession): void {
    clearTimeout(session.idle)
    if (session.state === 'pending') this.pending--
    if (session.id !== undefined && this.live.get(session.id) === session) this.live.delete(session.id)
    session.state = 'gone'
  }

  /** Closes every session (the endpoint stops). */
  async closeAll(): Promise<void> {
    const all = [...this.live.values()]
    await Promise.all(all.map((session) => session.server.close().catch(() => {})))
    for (const session of all) this.remove(session)
  }
}
