import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { chmod, lstat, mkdir, open, unlink, type FileHandle } from 'node:fs/promises'
import { dirname, extname, join } from 'node:path'
import type { SpillInput, SpillSaved, SpillWriter } from '@cordage/services'
import { SpillStoreError } from './errors.js'

export type { SpillInput, SpillSaved }

// The text is encoded 256 Ki UTF-16 units (at most 768 KiB of UTF-8) at a time into one reused 4 MiB
// buffer, written once it is nearly full: peak memory stays a few MB above the text, no fresh pages are
// faulted in per chunk, and a large text takes a few large writes rather than hundreds of thread-pool hops.
// (Double-buffering, encoding the next buffer during the previous write, measured slower here.)
const CHUNK_UNITS = 1 << 18
const BUFFER_BYTES = 4 << 20
const MAX_NAME = 120
const OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0)

/** Replaces anything outside `[A-Za-z0-9._-]`, strips leading dots and bounds the length. */
export function sanitizeName(part: string): string {
  return part
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, MAX_NAME)
}

/**
 * Private, collision- and symlink-safe spill files: 0600 files in a 0700 directory that must not be a
 * symlink, each created with O_EXCL (an existing name or planted symlink is never opened). Cordis-free.
 */
export class SpillStore {
  /** Every file this store completed, in order. */
  readonly written: string[] = []
  private readonly inFlight = new Set<Promise<unknown>>()
  private readonly writers = new Set<FileHandle>()
  private closed = false
  private dirChecked: Promise<void> | undefined

  constructor(readonly dir: string) {}

  /** Writes `input.text` to a new private file and returns its absolute path and byte size. */
  async save(input: SpillInput): Promise<SpillSaved> {
    if (this.closed) throw new SpillStoreError('the spill store is closed (its plugin was unloaded)')
    if (typeof input?.text !== 'string') throw new SpillStoreError('spill.save needs { text: string }')
    const task = this.write(input)
    this.inFlight.add(task)
    try {
      return await task
    } finally {
      this.inFlight.delete(task)
    }
  }

  /**
   * Opens a new private file (named and protected as `save` does) to append to while output arrives.
   * Writes run in order; once the store closes they fail, and what was written stays in the file.
   */
  async open(input: Omit<SpillInput, 'text'>): Promise<SpillWriter> {
    if (this.closed) throw new SpillStoreError('the spill store is closed (its plugin was unloaded)')
    const opening = this.createWriter({ ...input, text: '' })
    this.inFlight.add(opening)
    const { handle, path } = await opening.finally(() => this.inFlight.delete(opening))
    let bytes = 0
    let queue: Promise<unknown> = Promise.resolve()
    return {
      path,
      write: (chunk) => {
        const written = queue.then(async () => {
          if (this.closed) throw new SpillStoreError('the spill store was closed during a write')
          bytes += await writeAll(handle, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        })
        queue = written.catch(() => {})
        return written
      },
      close: async () => {
        await queue
        if (this.writers.delete(handle)) await handle.close().catch(() => {})
        return { path, bytes }
      },
    }
  }

  /**
   * Stops accepting saves and waits for in-flight ones, which stop at their next chunk and delete their
   * partial file; files opened for appending are closed with what they hold.
   */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled(this.inFlight)
    await Promise.all([...this.writers].map((handle) => handle.close().catch(() => {})))
    this.writers.clear()
  }

  private async write(input: SpillInput): Promise<SpillSaved> {
    await this.ensureDir()
    const { handle, path } = await this.create(input)
    let bytes = 0
    try {
      const text = input.text
      const buffer = Buffer.allocUnsafe(Math.min(BUFFER_BYTES, text.length * 3))
      for (let start = 0; start < text.length;) {
        if (this.closed) throw new SpillStoreError('the spill store was closed during a save')
        let filled = 0
        while (start < text.length && filled + CHUNK_UNITS * 3 <= buffer.length) {
          let end = Math.min(text.length, start + CHUNK_UNITS)
          // Never split a surrogate pair across two chunks.
          const last = text.charCodeAt(end - 1)
          if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
          filled += buffer.write(text.slice(start, end), filled, 'utf8')
          start = end
        }
        if (filled === 0) {
          // A buffer smaller than one chunk (a short text): encode what is left in one go.
          filled = buffer.write(text.slice(start), 0, 'utf8')
          start = text.length
        }
        bytes += await writeAll(handle, buffer.subarray(0, filled))
      }
      await handle.close()
    } catch (error) {
      await handle.close().catch(() => {})
      await unlink(path).catch(() => {})
      throw error
    }
    this.written.push(path)
    return { path, bytes }
  }

  /** Creates the directory (0700) once and refuses a symlink, a non-directory or a directory of another user. */
  private ensureDir(): Promise<void> {
    this.dirChecked ??= (async () => {
      await makeDirectory(this.dir)
      const stats = await lstat(this.dir)
      if (stats.isSymbolicLink()) throw new SpillStoreError(`the spill directory ${this.dir} is a symlink; refusing to write through it`)
      if (!stats.isDirectory()) throw new SpillStoreError(`the spill directory ${this.dir} is not a directory`)
      if (process.getuid && stats.uid !== process.getuid()) throw new SpillStoreError(`the spill directory ${this.dir} belongs to another user`)
      if ((stats.mode & 0o077) !== 0) await chmod(this.dir, 0o700)
    })()
    // A failed check is retried on the next save (the directory may have been fixed).
    this.dirChecked.catch(() => {
      this.dirChecked = undefined
    })
    return this.dirChecked
  }

  /** Makes the directory and creates a file to append to, kept open until `close`; gives it up if the store closed meanwhile. */
  private async createWriter(input: SpillInput): Promise<{ handle: FileHandle; path: string }> {
    await this.ensureDir()
    const created = await this.create(input)
    if (!this.closed) {
      this.written.push(created.path)
      this.writers.add(created.handle)
      return created
    }
    // Nothing this store makes may outlive it.
    await created.handle.close().catch(() => {})
    await unlink(created.path).catch(() => {})
    throw new SpillStoreError('the spill store was closed while a file was being opened')
  }

  private async create(input: SpillInput): Promise<{ handle: FileHandle; path: string }> {
    const suggested = sanitizeName(input.suggestedName ?? 'output') || 'output'
    const extension = extname(suggested) || '.txt'
    const stem =
      [input.toolName, input.callId, suggested.slice(0, suggested.length - extname(suggested).length)]
        .map((part) => sanitizeName(String(part ?? '')))
        .filter(Boolean)
        .join('-')
        .slice(0, MAX_NAME) || 'output'
    for (let attempt = 0; attempt < 20; attempt++) {
      const suffix = attempt === 0 ? '' : attempt < 10 ? `-${attempt + 1}` : `-${randomBytes(6).toString('hex')}`
      const path = join(this.dir, `${stem}${suffix}${extension}`)
      try {
        return { handle: await open(path, OPEN_FLAGS, 0o600), path }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
    }
    throw new SpillStoreError(`could not find a free spill file name for ${stem}${extension} in ${this.dir}`)
  }
}

/**
 * `mkdir -p` with 0700 directories, one level at a time. Node 20's own `recursive: true` retries for ever
 * where mkdir fails with ENOENT under an existing parent (any path under /proc), holding a libuv thread
 * at full CPU; here that ENOENT is an error.
 */
async function makeDirectory(dir: string): Promise<void> {
  const missing: string[] = []
  for (let current = dir; ; current = dirname(current)) {
    try {
      await mkdir(current, { mode: 0o700 })
      break
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') break
      if (code !== 'ENOENT' || dirname(current) === current) throw error
      missing.push(current)
    }
  }
  for (const path of missing.reverse()) {
    try {
      await mkdir(path, { mode: 0o700 })
    } catch (error) {
      // Another writer may have made it meanwhile; anything else (ENOENT again under /proc) is final.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}

async function writeAll(handle: FileHandle, buffer: Buffer): Promise<number> {
  let offset = 0
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset)
    offset += bytesWritten
  }
  return buffer.length
}
