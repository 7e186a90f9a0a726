import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync, type Stats } from 'node:fs'
import { sep } from 'node:path'
import { errorMessage } from '@cordage/core'

const { O_RDONLY, O_NONBLOCK } = constants

/** Why a skill file was not read: too large, outside the roots, or not a readable regular file. */
export type SkillFileProblem = 'too-large' | 'outside-roots' | 'unreadable'

/** A skill file that could not be read: the kind of problem, its size when known, and a message. */
export class SkillFileError extends Error {
  constructor(
    readonly problem: SkillFileProblem,
    message: string,
    readonly size?: number,
  ) {
    super(message)
  }
}

/** Whether the real path `real` is one of `roots` (real paths) or lies under one. */
export function insideRoots(real: string, roots: readonly string[]): boolean {
  return roots.some((root) => real === root || real.startsWith(root.endsWith(sep) ? root : root + sep))
}

/**
 * Reads at most `limit` bytes of the regular file at `path` (symlinks followed), after checking that the
 * file it opened lies inside `roots`. The check is on what was opened: the descriptor's device and inode
 * must be those of the path's real location, so a link swapped in between is refused, not followed.
 * `O_NONBLOCK` keeps a FIFO planted as `SKILL.md` from blocking the open. With `whole`, a file over the
 * limit (even one that grew after the check) is `too-large`; without, its first `limit` bytes are returned.
 */
export function readSkillFile(path: string, roots: readonly string[], limit: number, whole: boolean): { text: string; size: number } {
  let fd: number
  try {
    fd = openSync(path, O_RDONLY | O_NONBLOCK)
  } catch (error) {
    throw new SkillFileError('unreadable', `cannot be opened (${(error as NodeJS.ErrnoException).code ?? errorMessage(error)})`)
  }
  try {
    const opened = fstatSync(fd)
    if (!opened.isFile()) throw new SkillFileError('unreadable', 'is not a regular file')
    const real = realLocation(path, opened)
    if (real === undefined || !insideRoots(real, roots)) {
      throw new SkillFileError('outside-roots', `resolves to ${real ?? 'a file that moved while it was opened'}, outside the skill roots`)
    }
    if (whole && opened.size > limit) throw tooLarge(opened.size, limit)
    const buffer = Buffer.allocUnsafe(Math.min(opened.size, limit) + (whole ? 1 : 0))
    let length = 0
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
    }
    if (whole && length > limit) throw tooLarge(length, limit)
    return { text: buffer.toString('utf8', 0, length), size: opened.size }
  } finally {
    closeSync(fd)
  }
}

function tooLarge(size: number, limit: number): SkillFileError {
  return new SkillFileError('too-large', `is ${size} bytes, over the limit of ${limit} bytes`, size)
}

/** The real path of `path` if it still names the opened file (same device and inode). */
function realLocation(path: string, opened: Stats): string | undefined {
  try {
    const real = realpathSync(path)
    const named = statSync(real)
    return named.dev === opened.dev && named.ino === opened.ino ? real : undefined
  } catch {
    return undefined
  }
}
