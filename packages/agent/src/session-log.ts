import { closeSync, fstatSync, fsync, ftruncateSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { isAbsolute, join, resolve } from 'node:path'
import { SessionError } from './errors.js'
import type { SessionStore, StoredEvent, StoredSession } from '@cordage/services'
import { JsonlSessionStore } from './jsonl-store.js'
import { loadSession, repairMissingResults } from './session-load.js'
import { SESSION_VERSION, type SessionEvent, type SessionEventMap, type SessionEventType, type SessionHeader, type SessionParent } from './session-types.js'
import { errorMessage } from '@cordage/core'

/** Where sessions live and how they are named. */
export interface SessionLocation {
  /** The working directory recorded in the header; default `process.cwd()`. */
  cwd?: string
  /** The sessions directory; default `<cwd>/.cordage/sessions` (relative paths resolve against `cwd`). */
  dir?: string
}

export interface CreateSessionOptions extends SessionLocation {
  /** Default: a sortable `YYYYMMDD-HHMMSS-<6 hex>` id. */
  id?: string
  /** The model service id, recorded in the header. */
  model?: string
  /** For a child run: the call that started it (recorded in the header). */
  parent?: SessionParent
  /** Run depth, recorded in the header when above 0. */
  depth?: number
}

/** The sessions directory for `location`. */
export function sessionDir(location: SessionLocation = {}): string {
  const cwd = resolve(location.cwd ?? process.cwd())
  if (location.dir === undefined) return join(cwd, '.cordage', 'sessions')
  return isAbsolute(location.dir) ? location.dir : resolve(cwd, location.dir)
}

/** The file of session `idOrPath`: a path (contains a slash or ends in `.jsonl`) as given, else `<dir>/<id>.jsonl`. */
export function resolveSessionFile(idOrPath: string, location: SessionLocation = {}): string {
  if (idOrPath.endsWith('.jsonl') || idOrPath.includes('/') || idOrPath.includes('\\')) return resolve(location.cwd ?? process.cwd(), idOrPath)
  return join(sessionDir(location), `${idOrPath}.jsonl`)
}

function newHeader(id: string, now: Date, options: Omit<CreateSessionOptions, 'id'>): SessionHeader {
  const header: SessionHeader = { type: 'session', version: SESSION_VERSION, id, createdAt: now.toISOString(), cwd: resolve(options.cwd ?? process.cwd()) }
  if (options.model !== undefined) header.model = options.model
  if (options.parent !== undefined) header.parent = options.parent
  if (options.depth) header.depth = options.depth
  return header
}

/**
 * What a finished run waits for: `process` (default) — every event written, so a killed process loses
 * none, with the fsync for machine crashes started in the background; `machine` — that fsync too.
 */
export type SessionDurability = 'process' | 'machine'

/** How long `syncSoon` waits for a `sync()` that would cover the same lines. */
const SYNC_SOON_MS = 10

function newSessionId(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${randomBytes(3).toString('hex')}`
}

/**
 * An open, append-only session file. Every event is one `write` of one complete line to a descriptor
 * opened with `'a'`, so a crash leaves at most a torn last line; `sync()` fsyncs (the agent calls it at
 * turn boundaries).
 */
export class SessionLog {
  /** Creates `<dir>/<id>.jsonl` (directory 0700, file 0600) and writes the header. */
  static create(options: CreateSessionOptions = {}): SessionLog {
    const now = new Date()
    const id = options.id ?? newSessionId(now)
    if (!/^[\w.-]{1,128}$/.test(id))
      throw new SessionError('INVALID_SESSION_ID', `invalid session id ${JSON.stringify(id)}: use letters, digits, '.', '_' and '-'`)
    const dir = sessionDir(options)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const file = join(dir, `${id}.jsonl`)
    const header = newHeader(id, now, options)
    let fd: number
    try {
      fd = openSync(file, 'ax', 0o600)
    } catch (error) {
      const exists = (error as NodeJS.ErrnoException).code === 'EEXIST'
      throw new SessionError(
        exists ? 'INVALID_SESSION_ID' : 'SESSION_NOT_FOUND',
        exists ? `session ${id} already exists (${file}); resume it with SessionLog.open` : `cannot create ${file}: ${errorMessage(error)}`,
        { cause: error },
      )
    }
    const log = new SessionLog(file, fd, header, [], [])
    try {
      log.writeLine(JSON.stringify(header))
    } catch (error) {
      // No header, no session: leave no file that every later load would call corrupt.
      closeSync(fd)
      try {
        unlinkSync(file)
      } catch {
        // Then an empty file stays, refused on load as having no header.
      }
      throw error
    }
    return log
  }

  /**
   * A new session in `store`. The JSONL store gets a file written line by line as `create` does; any
   * other store gets the header now (`ready` settles when it is stored) and each batch of events appended
   * since the last `sync()` in one `store.append` (one transaction per turn).
   */
  static createIn(store: SessionStore, options: Omit<CreateSessionOptions, 'dir'> = {}): SessionLog {
    if (store instanceof JsonlSessionStore) {
      const log = SessionLog.create({ ...options, dir: store.dir })
      log.onWrite = () => store.notify(log.id)
      return log
    }
    const now = new Date()
    const id = options.id ?? newSessionId(now)
    if (!/^[\w.-]{1,128}$/.test(id))
      throw new SessionError('INVALID_SESSION_ID', `invalid session id ${JSON.stringify(id)}: use letters, digits, '.', '_' and '-'`)
    const header = newHeader(id, now, options)
    const log = new SessionLog(`${store.kind}:${id}`, undefined, header, [], [], store)
    log.ready = store.create(header)
    // A failed create surfaces at the first sync (and to whoever awaits `ready`), never as an unhandled rejection.
    log.ready.catch(() => {})
    return log
  }

  /**
   * Opens session `id` of `store` to continue it, repaired as `open` repairs a file (the repairs are stored
   * first). `repair: false` leaves calls without a result as they are (a run resumed after its user
   * answered runs them: see `RunOptions.finishCalls`); a JSONL file is always repaired. `stored` is the
   * session as the caller just read it (`store.read(id)`), to spare a second read.
   */
  static async openIn(store: SessionStore, id: string, options: { repair?: boolean; stored?: StoredSession } = {}): Promise<SessionLog> {
    if (store instanceof JsonlSessionStore) {
      const log = SessionLog.open(store.fileOf(id))
      log.onWrite = () => store.notify(log.id)
      return log
    }
    const stored = options.stored ?? (await store.read(id))
    const events = stored.events as SessionEvent[]
    const log = new SessionLog(`${store.kind}:${id}`, undefined, stored.header as SessionHeader, [...events], [...stored.warnings], store)
    for (const repair of options.repair === false ? [] : repairMissingResults(events)) {
      const data = repair.data as SessionEventMap['tool/result']
      log.warnings.push(`tool call ${data.callId} (${data.name}) had no result; recorded ABORTED_BEFORE_DISPATCH`)
      log.append('tool/result', data)
    }
    await log.sync()
    return log
  }

  /** Settles when the store has the header (at once for a file). */
  ready: Promise<void> = Promise.resolve()
  /** What `settle()` (the end of every run) waits for; `close()` always fsyncs. */
  durability: SessionDurability = 'process'
  /** Called after each line written to a file (the JSONL store wakes its followers). */
  private onWrite: (() => void) | undefined
  /** Events appended since the last sync began, for a store that is not a file. */
  private pending: SessionEvent[] = []

  /**
   * Opens an existing session to continue it: drops a torn last line from the file, writes the synthetic
   * results `loadSession` adds for calls that never got one, and appends after them.
   */
  static open(file: string): SessionLog {
    const loaded = loadSession(file)
    const fd = openSync(file, 'r+')
    try {
      ftruncateSync(fd, loaded.intactBytes)
    } finally {
      closeSync(fd)
    }
    const log = new SessionLog(
      file,
      openSync(file, 'a', 0o600),
      loaded.header,
      loaded.events.slice(0, loaded.events.length - loaded.repairs.length),
      loaded.warnings,
    )
    if (loaded.missingNewline) log.writeLine('')
    for (const repair of loaded.repairs) log.append('tool/result', repair.data as SessionEventMap['tool/result'])
    return log
  }

  private seq: number
  private isClosed = false
  /** Set when `close()` begins: appends are refused from then on and `session/end` is written once. */
  private ending = false
  /** The close in progress; every caller shares it (cleared when its flush fails, so a retry flushes again). */
  private closing: Promise<void> | undefined
  private syncTimer: NodeJS.Timeout | undefined
  private onSyncError: ((error: unknown) => void) | undefined
  private inFlight: Promise<void> | undefined
  private queued: Promise<void> | undefined
  /** Lines were written since the last flush started (the header counts). */
  private dirty = true

  private constructor(
    /** The absolute path of the session file. */
    readonly file: string,
    private readonly fd: number | undefined,
    readonly header: SessionHeader,
    private readonly log: SessionEvent[],
    /** What loading tolerated (torn line, repairs); empty for a new session. */
    readonly warnings: string[],
    private readonly store?: SessionStore,
  ) {
    this.seq = log.reduce((max, event) => Math.max(max, event.seq), 0)
  }

  /** True once `close()` was called (no more appends are accepted). */
  get closed(): boolean {
    return this.ending
  }

  get id(): string {
    return this.header.id
  }

  /** Every event in file order, including those appended since opening. */
  get events(): readonly SessionEvent[] {
    return this.log
  }

  /** Appends one event as one line; returns it. */
  append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): SessionEvent<T> {
    if (this.ending) throw new SessionError('SESSION_CLOSED', `session ${this.id} is closed`)
    const event = { type, seq: this.seq + 1, time: new Date().toISOString(), data } as SessionEvent<T>
    if (this.store) {
      this.pending.push(event as SessionEvent)
      this.dirty = true
    } else this.writeLine(JSON.stringify(event))
    // Only a written event takes its seq: after a failed write the next append reuses it, without a gap.
    this.seq = event.seq
    this.log.push(event as SessionEvent)
    return event
  }

  /**
   * Flushes the lines appended so far within `delayMs`, unless a `sync()` covers them first: a run that
   * ends sooner pays one fsync for its last turns instead of one per turn boundary. Failures go to
   * `onError`. Lines are in the kernel from the moment `append` returns (a killed process loses none);
   * the fsync is for crashes of the machine.
   */
  syncSoon(delayMs = SYNC_SOON_MS, onError?: (error: unknown) => void): void {
    if (this.isClosed || !this.dirty) return
    if (onError) this.onSyncError = onError
    if (this.syncTimer) return
    this.syncTimer = setTimeout(() => {
      this.syncTimer = undefined
      if (this.dirty) this.sync().catch((error: unknown) => this.onSyncError?.(error))
    }, delayMs)
    this.syncTimer.unref()
  }

  /**
   * Makes every event appended so far as durable as `durability` asks. A file has each line in the kernel
   * from the moment `append` returns, so `process` starts its fsync and resolves at once; a store that
   * is not a file has nothing until it is flushed, so it always waits for `sync()`. A background fsync's
   * failure goes to `onError`.
   */
  settle(onError?: (error: unknown) => void): Promise<void> {
    if (this.store || this.durability === 'machine') return this.sync()
    this.sync().catch((error: unknown) => (onError ?? this.onSyncError)?.(error))
    return Promise.resolve()
  }

  /**
   * Flushes every line appended so far to disk (fsync). While one flush is in flight, callers share a
   * single follow-up flush, so each returned promise covers the lines written before the call.
   */
  sync(): Promise<void> {
    if (this.isClosed) return Promise.resolve()
    // This flush covers what a deferred one would have.
    if (this.syncTimer) {
      clearTimeout(this.syncTimer)
      this.syncTimer = undefined
    }
    // Nothing written since the last flush started: that flush (if still running) covers every line.
    if (!this.dirty) return this.inFlight ?? Promise.resolve()
    if (!this.inFlight) return this.flush()
    this.queued ??= this.inFlight
      .catch(() => {})
      .then(() => {
        this.queued = undefined
        return this.flush()
      })
    return this.queued
  }

  private flush(): Promise<void> {
    if (this.isClosed) return Promise.resolve()
    this.dirty = false
    const flushing: Promise<void> = (this.store ? this.flushToStore(this.store) : this.fsync(this.fd!)).finally(() => {
      if (this.inFlight === flushing) this.inFlight = undefined
    })
    this.inFlight = flushing
    return flushing
  }

  private fsync(fd: number): Promise<void> {
    return new Promise<void>((done, fail) =>
      fsync(fd, (error) => {
        if (!error) return done()
        // Those lines are not known to be on disk: the next sync must try again.
        this.dirty = true
        fail(error)
      }),
    )
  }

  private async flushToStore(store: SessionStore): Promise<void> {
    const batch = this.pending
    this.pending = []
    try {
      await this.ready
      if (batch.length) await store.append(this.id, batch as StoredEvent[])
    } catch (error) {
      // Not stored: put the batch back in front of what came since, so the next sync retries it in order.
      this.pending = [...batch, ...this.pending]
      this.dirty = true
      throw error
    }
  }

  /**
   * Stops without writing anything more, as if the process had died here: appends are refused
   * (`SESSION_CLOSED`), events not yet stored (a store that is not a file holds them until a sync) are
   * dropped and the file is closed as it is. For a writer
   * that lost the session to another (a queued run whose worker lost its lock), whose late events could
   * land among the new writer's. A flush already in flight completes.
   */
  abandon(): void {
    if (this.isClosed) return
    this.ending = true
    this.isClosed = true
    this.pending = []
    clearTimeout(this.syncTimer)
    this.syncTimer = undefined
    const fd = this.fd
    if (fd !== undefined) void (this.inFlight ?? Promise.resolve()).catch(() => {}).finally(() => closeSync(fd))
  }

  /**
   * Writes `session/end` (unless `end` is `false`), fsyncs and closes the file. Idempotent: concurrent calls
   * share one close. When the flush fails the session stays open (no appends) and a later call retries it.
   */
  async close(end: SessionEventMap['session/end'] | false = { reason: 'closed' }): Promise<void> {
    if (this.isClosed) return
    if (!this.ending) {
      if (end) this.append('session/end', end)
      this.ending = true
    }
    this.closing ??= this.sync().then(
      () => {
        this.isClosed = true
        if (this.fd !== undefined) closeSync(this.fd)
      },
      (error: unknown) => {
        this.closing = undefined
        throw error
      },
    )
    return this.closing
  }

  private writeLine(line: string): void {
    // One write per line: concurrent appenders and crashes can only tear the last line, never interleave.
    this.dirty = true
    const buffer = Buffer.from(line + '\n', 'utf8')
    let offset = 0
    try {
      while (offset < buffer.length) offset += writeSync(this.fd!, buffer, offset)
    } catch (error) {
      // A full disk or a file size limit can stop a line part-way: cut what was written, so the file still
      // ends with a whole line and the next append (once there is room) does not land inside a torn one.
      if (offset)
        try {
          ftruncateSync(this.fd!, fstatSync(this.fd!).size - offset)
        } catch {
          // Then the torn tail stays; loading drops it, as after a crash.
        }
      throw new SessionError('SESSION_WRITE_FAILED', `cannot write to session file ${this.file}: ${errorMessage(error)}; nothing of this event was kept`, {
        cause: error,
      })
    }
    this.onWrite?.()
  }
}
