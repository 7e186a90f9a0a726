import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'

const MAX_LINKS = 40

/**
 * Walks `segments` from the real directory `start` the way the kernel does: a symlink is replaced by its
 * target before the next segment (so `link/..` leaves the target's parent), `..` climbs the real parent.
 * Dangling links are followed too, because writing through one creates its target. Once a segment does
 * not exist, the rest is joined lexically (nothing below it can be a link yet). Every directory a name
 * is looked up in goes into `looked`: what the result depends on.
 */
function walk(start: string, segments: string[], looked?: Set<string>): string {
  let current = start
  const queue = [...segments]
  let links = 0
  while (queue.length) {
    const segment = queue.shift()!
    if (segment === '' || segment === '.') continue
    if (segment === '..') {
      current = dirname(current)
      continue
    }
    const next = current === '/' ? `/${segment}` : `${current}/${segment}`
    looked?.add(current)
    let stats: ReturnType<typeof lstatSync>
    try {
      stats = lstatSync(next, { throwIfNoEntry: false })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return resolve(next, ...queue)
      throw error
    }
    if (!stats) return resolve(next, ...queue)
    if (!stats.isSymbolicLink()) {
      current = next
      continue
    }
    if (++links > MAX_LINKS) throw new Error(`too many levels of symbolic links under ${next}`)
    const target = readlinkSync(next)
    if (isAbsolute(target)) current = '/'
    queue.unshift(...target.split('/'))
  }
  return current
}

/**
 * The real locations `input` may denote under `root` (a real path): the kernel's reading (symlinks before
 * `..`) and the lexical one tools such as fs use (`..` collapsed first, then symlinks). Both are returned
 * when they differ, so a rule is tested against every location the call could reach. With `looked`, every
 * directory a name was looked up in is added to it (the root's own location is taken as fixed, as fs
 * takes it): what the readings depend on.
 */
export function canonicalPaths(root: string, input: string, looked?: Set<string>): string[] {
  if (input.includes('\0')) throw new Error(`the path ${JSON.stringify(input)} contains a NUL byte`)
  const segments = input.split('/')
  const absolute = resolve(root, input)
  const lexical = looked ? walkFrom(root, absolute.split('/'), looked) : realLexical(absolute)
  // Without `..` both readings walk the same segments.
  if (!segments.includes('..')) return [lexical]
  const physical = looked
    ? walkFrom(root, isAbsolute(input) ? segments : [...root.split('/'), ...segments], looked)
    : walk(isAbsolute(input) ? '/' : root, segments)
  return physical === lexical ? [physical] : [physical, lexical]
}

/** `walk` of absolute `segments` that starts at `root` when they lead through it (its components are real: no link to follow). */
function walkFrom(root: string, segments: string[], looked: Set<string>): string {
  const prefix = root === '/' ? [''] : root.split('/')
  const inside = prefix.every((segment, index) => segments[index] === segment)
  return inside ? walk(root, segments.slice(prefix.length), looked) : walk('/', segments, looked)
}

/** One native realpath when the path exists (the common case); the walk handles missing tails and dangling links. */
function realLexical(absolute: string): string {
  try {
    return realpathSync.native(absolute)
  } catch {
    return walk('/', absolute.split('/'))
  }
}
