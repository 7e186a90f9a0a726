import type { BigIntStats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'

/** Bytes per read, and the distance between two entries of a line index. */
export const CHUNK = 1 << 20
// Binary detection looks at this many leading bytes for a NUL (the heuristic git uses).
const BINARY_PROBE = 8000
// A version of a file is indexed for later reads only when it had not changed for this long before the
// count began: a change after the count then moves mtime or ctime past what the index recorded, even
// where timestamps are coarse (the "racily clean" rule of git's index).
const SETTLED_NS = 2_000_000_000n
const MAX_INDEXED_FILES = 32

/** Where line `number` can be read from: a chunk boundary at or before its start, and how many lines precede that boundary. */
export interface LineStart {
  position: number
  linesBefore: number
}

/** The newline counts at every chunk boundary of one version of a file, and its line count. */
export class LineIndex {
  constructor(
    /** `newlinesBefore[i]`: newlines in bytes `[0, i * CHUNK)`. */
    private readonly newlinesBefore: Float64Array,
    readonly totalLines: number,
    readonly binary: boolean,
  ) {}

  /** The last chunk boundary from which reading forward passes the start of line `number` (1-based). */
  startOf(number: number): LineStart {
    // Line n starts after the (n-1)th newline, so a boundary with at most n-2 newlines before it lies before that newline.
    let low = 0
    let high = this.newlinesBefore.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (this.newlinesBefore[middle]! <= number - 2) low = middle
      else high = middle - 1
    }
    return { position: low * CHUNK, linesBefore: this.newlinesBefore[low] ?? 0 }
  }
}

/**
 * Reads a whole file once, counting its lines without keeping any (two reads in flight, so the disk or
 * page cache and the count overlap), and records the newline count at every chunk boundary: a later
 * window can then be read from the nearest boundary instead of from the start.
 */
export async function countLines(handle: FileHandle, signal?: AbortSignal): Promise<LineIndex> {
  const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)]
  const boundaries: number[] = [0]
  let newlines = 0
  let lastByte = -1
  let chunk = 0
  const readChunk = (index: number) => handle.read(buffers[index % 2]!, 0, CHUNK, index * CHUNK)
  let pending = [readChunk(0), readChunk(1)]
  try {
    for (;;) {
      if (signal?.aborted) throw signal.reason
      const { bytesRead, buffer } = await pending[0]!
      if (bytesRead === 0) break
      const data = bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead)
      if (chunk === 0 && data.subarray(0, BINARY_PROBE).includes(0)) return new LineIndex(new Float64Array(1), 0, true)
      for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) newlines++
      lastByte = data[bytesRead - 1]!
      boundaries.push(newlines)
      chunk++
      if (bytesRead < CHUNK) break
      // The buffer just counted is free again: it takes the read after the one still in flight.
      pending = [pending[1]!, readChunk(chunk + 1)]
    }
  } finally {
    // Never leave a read in flight (or its failure unobserved) once the caller may close the handle.
    await Promise.allSettled(pending)
  }
  // An unterminated last line is a line too.
  const total = newlines + (lastByte !== -1 && lastByte !== 10 ? 1 : 0)
  return new LineIndex(Float64Array.from(boundaries), total, false)
}

/** The version of a file an index belongs to: identity, size, and nanosecond change times. */
function versionOf(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`
}

/**
 * Line indexes of recently read large files, per plugin instance, by real path. An index is used only
 * for the very version it was counted from (device, inode, size, mtime and ctime of the opened
 * descriptor), and kept only when that version had settled before the count began, so a file changed
 * since can never be paged with stale line numbers.
 */
export class LineIndexCache {
  private readonly entries = new Map<string, { version: string; index: LineIndex }>()

  /** The index of this version of the file at `real`, if one was kept. */
  get(real: string, stats: BigIntStats): LineIndex | undefined {
    const entry = this.entries.get(real)
    if (!entry || entry.version !== versionOf(stats)) return undefined
    // Most recently used last, so eviction drops the least recently used.
    this.entries.delete(real)
    this.entries.set(real, entry)
    return entry.index
  }

  /** Keeps `index` for this version of `real` if the version had settled by `countStartedNs` (wall clock, ns). */
  remember(real: string, stats: BigIntStats, index: LineIndex, countStartedNs: bigint): void {
    const settled = countStartedNs - SETTLED_NS
    if (index.binary || stats.mtimeNs > settled || stats.ctimeNs > settled) return
    this.entries.delete(real)
    this.entries.set(real, { version: versionOf(stats), index })
    if (this.entries.size > MAX_INDEXED_FILES) this.entries.delete(this.entries.keys().next().value!)
  }

  /** Forgets every index (on unload). */
  clear(): void {
    this.entries.clear()
  }
}
