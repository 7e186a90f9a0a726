import { closeSync, constants, fstatSync, openSync, read, readSync, realpathSync, statSync } from 'node:fs'
import { promisify } from 'node:util'
import { relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError, errorMessage } from '@cordage/core'
import { LspError } from './errors.js'

/** A source file the tool may query: its real path, root-relative display form and file URI. */
export interface SourceFile {
  real: string
  display: string
  uri: string
  size: number
  mtimeMs: number
}

/** Resolves tool paths inside one workspace root (symlinks followed) and denies escapes. */
export class Workspace {
  readonly root: string
  readonly uri: string

  constructor(
    root: string,
    private readonly allowOutsideRoot: boolean,
  ) {
    try {
      this.root = realpathSync(resolve(root))
    } catch (error) {
      throw new ConfigError('lsp', [{ path: 'root', message: `${JSON.stringify(root)} does not exist or is not accessible (${errorMessage(error)})` }])
    }
    this.uri = pathToFileURL(this.root).href
  }

  /** Whether a real path lies inside the root. */
  contains(real: string): boolean {
    return real === this.root || real.startsWith(this.root.endsWith(sep) ? this.root : this.root + sep)
  }

  /** The model-facing form of a real path: root-relative with `/`, or absolute outside the root. */
  display(real: string): string {
    if (!this.contains(real)) return real
    return relative(this.root, real).split(sep).join('/') || '.'
  }

  /**
   * Resolves `input` to an existing regular file inside the root. Synchronous: one `realpath` and one `stat`
   * system call, where the promise-based calls each made a thread-pool round trip.
   */
  file(input: string): SourceFile {
    if (input.includes('\0')) throw new LspError('LSP_NOT_FOUND', `the path ${JSON.stringify(input)} contains a NUL byte`)
    const lexical = resolve(this.root, input)
    let real: string
    try {
      real = realpathSync.native(lexical)
    } catch {
      throw new LspError('LSP_NOT_FOUND', `${JSON.stringify(input)} does not exist; check the path (glob can list files)`)
    }
    if (!this.allowOutsideRoot && !this.contains(real)) {
      throw new LspError(
        'LSP_PATH_OUTSIDE_ROOT',
        `${JSON.stringify(input)} resolves to ${real}, outside the workspace root ${this.root}; only files inside the root can be queried`,
      )
    }
    const stats = statSync(real)
    if (!stats.isFile()) throw new LspError('LSP_NOT_FOUND', `${this.display(real)} is not a regular file`)
    return { real, display: this.display(real), uri: pathToFileURL(real).href, size: stats.size, mtimeMs: stats.mtimeMs }
  }
}

// Source files up to this size are read synchronously (a few syscalls); larger ones off the event loop.
const SMALL = 1 << 20
const readAsync = promisify(read)

/**
 * The text of a source file, refused over `maxBytes` (servers get whole documents). The file is opened
 * without blocking and checked again on the descriptor, and at most `maxBytes + 1` bytes are read: since
 * it was resolved, the path may have become a FIFO (which would block the read forever) or grown.
 */
export async function readSource(file: SourceFile, maxBytes: number): Promise<string> {
  const tooLarge = (size: number) =>
    new LspError('LSP_FILE_TOO_LARGE', `${file.display} is ${size} bytes; the lsp tool sends files of at most ${maxBytes} bytes to a language server`)
  if (file.size > maxBytes) throw tooLarge(file.size)
  const fd = openSync(file.real, constants.O_RDONLY | constants.O_NONBLOCK)
  try {
    const stats = fstatSync(fd)
    if (!stats.isFile()) throw new LspError('LSP_NOT_FOUND', `${file.display} is not a regular file`)
    if (stats.size > maxBytes) throw tooLarge(stats.size)
    const buffer = Buffer.allocUnsafe(Math.min(stats.size, maxBytes) + 1)
    let length = 0
    for (;;) {
      const count =
        stats.size <= SMALL
          ? readSync(fd, buffer, length, buffer.length - length, null)
          : (await readAsync(fd, buffer, length, buffer.length - length, null)).bytesRead
      if (count === 0 || (length += count) === buffer.length) break
    }
    if (length > maxBytes) throw tooLarge(length)
    return buffer.toString('utf8', 0, length)
  } finally {
    closeSync(fd)
  }
}
