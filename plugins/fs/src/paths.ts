import { realpathSync } from 'node:fs'
import { realpath } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { ConfigError, errorMessage } from '@cordage/core'
import { FsError } from './errors.js'

/** A path the tools may touch: its real (symlink-free) location and the form shown to the model. */
export interface ResolvedPath {
  /** Absolute, symlinks resolved (for new files: the real nearest existing ancestor plus the rest). */
  real: string
  /** Root-relative with `/` separators (`.` for the root), or absolute when outside the root. */
  display: string
  /** Whether the path existed when resolved. */
  exists: boolean
}

/** Resolves tool paths inside one workspace root, following symlinks, and denies escapes. */
export class Workspace {
  /** The real path of the root. */
  readonly root: string

  constructor(
    root: string,
    readonly allowOutsideRoot: boolean,
  ) {
    try {
      this.root = realpathSync(resolve(root))
    } catch (error) {
      throw new ConfigError('fs', [{ path: '', message: `config.root ${JSON.stringify(root)} does not exist or is not accessible (${errorMessage(error)})` }])
    }
  }

  /** Resolves `input` (relative to the root, or absolute); throws `PATH_OUTSIDE_ROOT` for escapes. */
  async resolve(input: string): Promise<ResolvedPath> {
    if (input.includes('\0')) throw new FsError('NOT_FOUND', `the path ${JSON.stringify(input)} contains a NUL byte`)
    const lexical = resolve(this.root, input)
    let real: string
    let exists = true
    try {
      real = await realpath(lexical)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      exists = false
      real = await realNearest(lexical)
    }
    if (!this.allowOutsideRoot && !this.contains(real)) {
      const via = this.contains(lexical) ? ` (through a symlink it resolves to ${real})` : ` (it resolves to ${real})`
      throw new FsError(
        'PATH_OUTSIDE_ROOT',
        `${JSON.stringify(input)} is outside the workspace root ${this.root}${via}; only paths inside the root are allowed`,
      )
    }
    return { real, display: this.display(real), exists }
  }

  /** Whether a real path lies inside the root. */
  contains(real: string): boolean {
    return real === this.root || real.startsWith(this.root.endsWith(sep) ? this.root : this.root + sep)
  }

  /** The model-facing form of a real path. */
  display(real: string): string {
    if (!this.contains(real)) return real
    const rel = relative(this.root, real)
    return rel === '' ? '.' : sep === '/' ? rel : rel.split(sep).join('/')
  }
}

/** The real path of the nearest existing ancestor of `path`, joined with the segments that do not exist yet. */
async function realNearest(path: string): Promise<string> {
  const missing: string[] = []
  let current = path
  for (;;) {
    const parent = dirname(current)
    missing.unshift(basename(current))
    if (parent === current) return path
    try {
      return join(await realpath(parent), ...missing)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'ENOTDIR') throw error
      current = parent
    }
  }
}
