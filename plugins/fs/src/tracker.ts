import type { BigIntStats } from 'node:fs'
import { FsError } from './errors.js'

/** What the agent last saw of a file: identity and version as reported by `stat` (nanosecond mtime). */
interface Seen {
  ino: bigint
  size: bigint
  mtimeNs: bigint
}

/** Read-before-write tracking keyed by real path: writes to existing files need an up-to-date read. */
export class ReadTracker {
  private readonly seen = new Map<string, Seen>()

  constructor(private readonly requireRead: boolean) {}

  /** Records the version of `real` the agent saw: the stats of the descriptor read (taken before reading) or written. */
  remember(real: string, stats: BigIntStats): void {
    this.seen.set(real, { ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs })
  }

  /** Throws `NOT_READ` or `STALE_FILE` unless the existing file `real` (`stats` of its open descriptor) is unchanged since the agent read it. */
  check(real: string, display: string, stats: BigIntStats): void {
    const seen = this.seen.get(real)
    if (!seen) {
      if (!this.requireRead) return
      throw new FsError('NOT_READ', `${display} already exists and has not been read in this session; read it first, then write or edit it`)
    }
    if (stats.ino !== seen.ino || stats.size !== seen.size || stats.mtimeNs !== seen.mtimeNs) {
      throw new FsError('STALE_FILE', `${display} changed on disk since it was last read (by another program or person); read it again, then redo the change`)
    }
  }

  /** Forgets every file (on unload). */
  clear(): void {
    this.seen.clear()
  }
}
