import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import type { StoredEvent } from '@cordage/services'
import type { LoadedSession } from './session-load.js'

/**
 * Reads a session file's events incrementally for `follow`: the first read loads the whole file (with the
 * tolerance of `loadSession`), later reads only the bytes appended since, whole lines only, so a
 * follower's cost per new event does not grow with the session. A file that got shorter (a torn tail cut
 * before an append) is loaded whole again.
 */
export class SessionTail {
  /** Bytes of whole lines consumed so far. */
  private offset = -1

  constructor(
    private readonly file: string,
    /** Loads the whole file; throws `SESSION_NOT_FOUND` when it is missing. */
    private readonly load: () => LoadedSession,
  ) {}

  /** Events with `seq > after` stored since the last read (every stored one on the first). */
  async readAfter(after: number): Promise<StoredEvent[]> {
    if (this.offset < 0) return this.reload(after)
    // Synchronous on purpose: reading a few appended lines of a local file is far cheaper than a hop
    // through the thread pool, which a busy machine makes a follower wait for.
    let fd: number
    try {
      fd = openSync(this.file, 'r')
    } catch {
      return this.reload(after)
    }
    try {
      const { size } = fstatSync(fd)
      if (size < this.offset) return this.reload(after)
      if (size === this.offset) return []
      const buffer = Buffer.alloc(size - this.offset)
      let read = 0
      while (read < buffer.length) {
        const bytesRead = readSync(fd, buffer, read, buffer.length - read, this.offset + read)
        if (!bytesRead) break
        read += bytesRead
      }
      // Only whole lines: a line still being written (no newline yet) is read next time.
      const end = buffer.lastIndexOf(0x0a, read - 1)
      if (end < 0) return []
      this.offset += end + 1
      const events: StoredEvent[] = []
      for (const line of buffer.subarray(0, end).toString('utf8').split('\n')) {
        if (!line) continue
        let event: StoredEvent
        try {
          event = JSON.parse(line) as StoredEvent
        } catch {
          continue
        }
        if (typeof event?.seq === 'number' && event.seq > after) events.push(event)
      }
      return events
    } finally {
      closeSync(fd)
    }
  }

  private reload(after: number): StoredEvent[] {
    const loaded = this.load()
    this.offset = loaded.intactBytes
    // Repairs are what a resume would add, not what is stored.
    return (loaded.events.slice(0, loaded.events.length - loaded.repairs.length) as StoredEvent[]).filter((event) => event.seq > after)
  }
}
