import { ForeignSessionError, TooManySessionsError, UnknownSessionError } from './errors.js'
import type { PtyModule } from './pty.js'
import { TerminalSession, type SessionOptions } from './session.js'

/** Ids never repeat within a process, so a reloaded plugin cannot hand out an id a model still remembers. */
let lastId = 0

/** Tables of every loaded instance, for the one `exit` listener the process gets (not one per instance). */
const tables = new Set<SessionTable>()
const onExit = () => {
  for (const table of tables) table.killAllNow()
}

/**
 * An exiting process cannot await a close: SIGKILL the table's sessions synchronously then. Returns the
 * undo (for the plugin's effect).
 */
export function killOnExit(table: SessionTable): () => void {
  if (!tables.size) process.on('exit', onExit)
  tables.add(table)
  return () => {
    tables.delete(table)
    if (!tables.size) process.off('exit', onExit)
  }
}

/** What the table needs besides the sessions themselves. */
export interface TableOptions {
  maxSessions: number
  /** Close a session nobody has named in a tool call for this long (0: never). */
  idleTimeoutMs: number
  /** Tells the agent something happened outside a tool call (a program exited, an idle session was closed). */
  notify(text: string): void
  /** node-pty, loaded by the plugin. */
  pty: PtyModule
  /** The host's debug log. */
  log(message: string): void
}

/** The sessions of one plugin instance: ids, owners (the opening agent), limits and idle expiry. */
export class SessionTable {
  private readonly sessions = new Map<string, TerminalSession>()

  constructor(private readonly options: TableOptions) {}

  /** Opens a session; the limit counts every session not yet closed, exited ones included. */
  open(options: Omit<SessionOptions, 'id' | 'onExit' | 'pty' | 'log'>): TerminalSession {
    if (this.sessions.size >= this.options.maxSessions) throw new TooManySessionsError(this.options.maxSessions, [...this.sessions.keys()])
    const session = new TerminalSession({
      ...options,
      pty: this.options.pty,
      log: this.options.log,
      id: `term_${++lastId}`,
      onExit: (ended) => {
        if (ended.sending || !this.sessions.has(ended.id)) return
        const how = ended.signal ? `was killed by ${ended.signal}` : `exited with code ${ended.exitCode}`
        this.options.notify(`Terminal ${ended.id} (${ended.options.command}) ${how}. Its last screen stays readable with terminal_read until terminal_close.`)
      },
    })
    this.sessions.set(session.id, session)
    return session
  }

  /** The session `id` if `agent` may use it (a session opened by an agent belongs to that agent). */
  get(id: string, agent: string | undefined): TerminalSession {
    const session = this.sessions.get(id)
    if (!session)
      throw new UnknownSessionError(
        id,
        [...this.visible(agent)].map((known) => known.id),
      )
    if (session.options.owner !== null && session.options.owner !== (agent ?? null)) throw new ForeignSessionError(id)
    session.usedAt = Date.now()
    return session
  }

  /** The sessions `agent` may use, oldest first. */
  *visible(agent: string | undefined): Iterable<TerminalSession> {
    for (const session of this.sessions.values()) {
      if (session.options.owner === null || session.options.owner === (agent ?? null)) yield session
    }
  }

  /** Forgets the session and kills everything it runs; resolves once nothing is left. */
  close(session: TerminalSession): Promise<void> {
    this.sessions.delete(session.id)
    return session.close()
  }

  /** Closes every session (plugin unload). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => this.close(session)))
  }

  /** SIGKILLs every session's processes synchronously (process exit, where nothing can be awaited). */
  killAllNow(): void {
    for (const session of this.sessions.values()) session.killNow()
  }

  /** Closes sessions idle past the timeout, telling the agent which. */
  async sweep(now = Date.now()): Promise<void> {
    const limit = this.options.idleTimeoutMs
    if (!limit) return
    const idle = [...this.sessions.values()].filter((session) => !session.sending && now - session.usedAt >= limit)
    await Promise.all(
      idle.map(async (session) => {
        await this.close(session)
        this.options.notify(
          `Terminal ${session.id} (${session.options.command}) was closed after ${Math.round(limit / 1000)} s without use; open a new one if you still need it.`,
        )
      }),
    )
  }
}
