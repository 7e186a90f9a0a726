import { statSync } from 'node:fs'
import { join } from 'node:path'
import { compilePathGlob } from './path-match.js'
import { formOf, type NamedFiles, type PathForm } from './paths.js'
import type { Rule } from './rules.js'

/**
 * The files that restrictive path rules name exactly (a path without wildcards), found again by device
 * and inode: a hard link is the same file under another name, which neither the spelling nor symlink
 * resolution reveals. Each named file is looked up when a file with other names (a link count above 1)
 * is checked, so a rule names whatever file is at its path now and single-named files cost nothing.
 */
export class RuleNamedFiles implements NamedFiles {
  private readonly paths: string[]

  constructor(
    private readonly root: string,
    rules: readonly Rule[],
  ) {
    const named = new Set<string>()
    for (const rule of rules) {
      if (rule.action === 'allow' || rule.config.path === undefined) continue
      const literal = compilePathGlob(rule.config.path).literal
      if (literal !== undefined) named.add(literal.startsWith('/') ? literal : join(root, literal))
    }
    this.paths = [...named]
  }

  /** The forms under which the rules name the file `(dev, ino)`: empty unless it is one they name. */
  formsOf(dev: bigint, ino: bigint): PathForm[] {
    const forms: PathForm[] = []
    for (const path of this.paths) {
      let stats
      try {
        stats = statSync(path, { bigint: true, throwIfNoEntry: false })
      } catch (error) {
        // A parent that is a file names nothing; anything else (a permission error) fails closed.
        if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') continue
        throw error
      }
      if (stats && !stats.isDirectory() && stats.dev === dev && stats.ino === ino) forms.push(formOf(this.root, path, false))
    }
    return forms
  }
}
