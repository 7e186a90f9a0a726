import { closeSync, fstatSync, fsync, ftruncateSync, mkdirSync, openSync, readSync, readdirSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import {
  SessionStoreError,
  assertNextSeqs,
  assertSessionId,
  followEvents,
  matchesFilter,
  statusOf,
  type FollowOptions,
  type SessionListFilter,
  type SessionStore,
  type SessionSummary,
  type StoredEvent,
  type StoredSession,
  type StoredSessionHeader,
} from '@cordage/services'
import { SessionTail } from './jsonl-tail.js'
import { loadSession } from './session-load.js'
import { readHeader } from './session-tree.js'
import { sessionDir, type SessionLocation } from './session-log.js'
import type { SessionEvent } from './session-types.js'
import { errorMessage } from '@cordage/core'

/** Options of the JSONL store: where the files are, and how often `follow` re-reads without a wake. */
export interface JsonlStoreOptions extends SessionLocation {
  /** Default 250 ms. */
  pollMs?: number
}

/**
 * The embedded session store: one `<id>.jsonl` file per session in the sessions directory, in the format
 * `SessionLog` writes (header line, then one event per line). A batch is one `write` of whole lines and
 * one fsync: a crash keeps a prefix of the batch, each kept line whole; a torn last line is dropped on
 * read (and cut before the next append).
 */
export class JsonlSessionStore implements SessionStore {
  readonly kind = 'jsonl'
  /** The absolute sessions directory. */
  readonly dir: string
  private readonly pollMs: number
  // The last seq and file size this store wrote per session: a size that differs means another writer, so reload.
  private readonly tails = new Map<string, { lastSeq: number; size: number }>()
  private readonly listeners = new Map<string, Set<() => void>>()

  constructor(options: JsonlStoreOptions = {}) {
    this.dir = sessionDir(options)
    this.pollMs = options.pollMs ?? 250
  }

  /** The file of session `id`. */
  fileOf(id: string): string {
    assertSessionId(id)
    return join(this.dir, `${id}.jsonl`)
  }

  /** Wakes the followers of `id` in this process (`SessionLog` calls it after each line it writes). */
  notify(id: string): void {
    for (const wake of this.listeners.get(id) ?? []) wake()
  }

  async create(header: StoredSessionHeader): Promise<void> {
    const file = this.fileOf(header.id)
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    let fd: number
    try {
      fd = openSync(file, 'wx', 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionStoreError('SESSION_EXISTS', `session ${header.id} already exists (${file})`)
      throw new SessionStoreError('STORE_UNAVAILABLE', `cannot create ${file}: ${errorMessage(error)}`, { cause: error })
    }
    try {
      writeAll(fd, JSON.stringify(header) + '\n')
      await fsyncAsync(fd)
    } finally {
      closeSync(fd)
    }
    this.notify(header.id)
  }

  async append(id: string, events: readonly StoredEvent[]): Promise<void> {
    const file = this.fileOf(id)
    const cached = this.tails.get(id)
    let last: number
    let repairTail: { intactBytes: number; missingNewline: boolean } | undefined
    if (cached && sizeOf(file) === cached.size) last = cached.lastSeq
    else {
      const loaded = loadStored(file, id)
      const stored = loaded.events.length - loaded.repairs.length
      last = stored === 0 ? 0 : loaded.events[stored - 1].seq
      repairTail = loaded
    }
    assertNextSeqs(id, last, events)
    if (!events.length) return
    const fd = openSync(file, 'r+')
    try {
      // Cut a torn tail (a crash mid-line) before appending, so the new lines start on a line of their own.
      if (repairTail) ftruncateSync(fd, repairTail.intactBytes)
      const size = fstatSync(fd).size
      const text = (repairTail?.missingNewline ? '\n' : '') + events.map((event) => JSON.stringify(event)).join('\n') + '\n'
      writeAll(fd, text, size)
      await fsyncAsync(fd)
      this.tails.set(id, { lastSeq: events[events.length - 1].seq, size: size + Buffer.byteLength(text) })
    } finally {
      closeSync(fd)
    }
    this.notify(id)
  }

  async read(id: string): Promise<StoredSession> {
    const loaded = loadStored(this.fileOf(id), id)
    const events = loaded.events.slice(0, loaded.events.length - loaded.repairs.length) as StoredEvent[]
    // Repairs are what a resume would add; a reader gets what is stored, and the notes of what was dropped.
    const warnings = loaded.warnings.slice(0, loaded.warnings.length - loaded.repairs.length)
    return { header: loaded.header, events, warnings }
  }

  async list(filter: SessionListFilter = {}): Promise<SessionSummary[]> {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch {
      return []
    }
    const summaries: SessionSummary[] = []
    for (const name of names) {
      if (!name.endsWith('.jsonl')) continue
      const summary = summarize(join(this.dir, name))
      if (summary && matchesFilter(summary, filter)) summaries.push(summary)
    }
    summaries.sort((a, b) => (a.header.createdAt < b.header.createdAt ? 1 : a.header.createdAt > b.header.createdAt ? -1 : a.header.id < b.header.id ? 1 : -1))
    return filter.limit === undefined ? summaries : summaries.slice(0, filter.limit)
  }

  follow(id: string, options: FollowOptions = {}): AsyncIterable<StoredEvent> {
    const file = this.fileOf(id)
    const tail = new SessionTail(file, () => loadStored(file, id))
    return followEvents(
      {
        readAfter: (after) => tail.readAfter(after),
        subscribe: (wake) => {
          const set = this.listeners.get(id) ?? new Set()
          set.add(wake)
          this.listeners.set(id, set)
          return () => {
            set.delete(wake)
            if (!set.size) this.listeners.delete(id)
          }
        },
        pollMs: this.pollMs,
      },
      options.after,
      options.signal,
    )
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return -1
  }
}

function loadStored(file: string, id: string): ReturnType<typeof loadSession> {
  try {
    statSync(file)
  } catch {
    throw new SessionStoreError('SESSION_NOT_FOUND', `no session ${id} (${file})`)
  }
  return loadSession(file)
}

/** Header and tail of one file, reading only its first and last lines. */
function summarize(file: string): SessionSummary | undefined {
  const header = readHeader(file)
  if (!header) return undefined
  const last = lastEvent(file)
  return {
    header,
    status: statusOf(last?.type),
    lastSeq: last?.seq ?? 0,
    updatedAt: last?.time ?? header.createdAt,
  }
}

function lastEvent(file: string): SessionEvent | undefined {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    // An event line can be long (a big tool result), so read back further until a whole line is in view.
    for (let span = 65_536; ; span *= 4) {
      const start = Math.max(0, size - span)
      const buffer = Buffer.alloc(size - start)
      readSync(fd, buffer, 0, buffer.length, start)
      const lines = buffer.toString('utf8').split('\n')
      // Whole lines only: the first may be cut by the window, the last may be torn or empty.
      for (let index = lines.length - 1; index >= (start === 0 ? 0 : 1); index--) {
        const event = parse(lines[index])
        if (event && typeof event.seq === 'number') return event
        if (event?.type === 'session') return undefined
      }
      if (start === 0) return undefined
    }
  } finally {
    closeSync(fd)
  }
}

function parse(line: string): any {
  try {
    return line ? JSON.parse(line) : undefined
  } catch {
    return undefined
  }
}

function writeAll(fd: number, text: string, position?: number): void {
  const buffer = Buffer.from(text, 'utf8')
  let offset = 0
  while (offset < buffer.length) offset += writeSync(fd, buffer, offset, buffer.length - offset, position === undefined ? null : position + offset)
}

function fsyncAsync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())))
}
