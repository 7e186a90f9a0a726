import { realpathSync } from 'node:fs'
import { readFile, realpath, stat } from 'node:fs/promises'
import { relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ConfigError } from '@cordage/core'
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
      throw new ConfigError('lsp', [{ path: 'root', message: `${JSON.stringify(root)} does not exist or is not accessible (${(error as Error).message})` }])
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

  /** Resolves `input` to an existing regular file inside the root. */
  async file(input: string): Promise<SourceFile> {
    if (input.includes('\0')) throw new LspError('LSP_NOT_FOUND', `the path ${JSON.stringify(input)} contains a NUL byte`)
    const lexical = resolve(this.root, input)
    let real: string
    try {
      real = await realpath(lexical)
    } catch {
      throw new LspError('LSP_NOT_FOUND', `${JSON.stringify(input)} does not exist; check the path (glob can list files)`)
    }
    if (!this.allowOutsideRoot && !this.contains(real)) {
      throw new LspError(
        'LSP_PATH_OUTSIDE_ROOT',
        `${JSON.stringify(input)} resolves to ${real}, outside the workspace root ${this.root}; only files inside the root can be queried`,
      )
    }
    const stats = await stat(real)
    if (!stats.isFile()) throw new LspError('LSP_NOT_FOUND', `${this.display(real)} is not a regular file`)
    return { real, display: this.display(real), uri: pathToFileURL(real).href, size: stats.size, mtimeMs: stats.mtimeMs }
  }
}

/** The text of a source file, refused over `maxBytes` (servers get whole documents). */
export async function readSource(file: SourceFile, maxBytes: number): Promise<string> {
  if (file.size > maxBytes) {
    throw new LspError(
      'LSP_FILE_TOO_LARGE',
      `${file.display} is ${file.size} bytes; the lsp tool sends files of at most ${maxBytes} bytes to a language server`,
    )
  }
  return readFile(file.real, 'utf8')
}
