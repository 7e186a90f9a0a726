import { lstatSync, readlinkSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import type { JsonValue, ToolDefinition, ToolExec } from '@cordage/core'
import { parsePointer, resolveAll, type Pointer } from './pointer.js'

/** How a tool uses a path argument. */
export type Access = 'read' | 'write'

/** One spelling-independent location a call touches: its real absolute path and, inside the root, its root-relative form. */
export interface PathForm {
  real: string
  /** `/`-separated and relative to the root (`.` for the root itself); absent outside the root. */
  relative?: string
}

/** One path argument of a call, with every real location it may denote (usually one). */
export interface CallPath {
  access: Access
  forms: PathForm[]
}

const MAX_LINKS = 40

/**
 * Walks `segments` from the real directory `start` the way the kernel does: a symlink is replaced by its
 * target before the next segment (so `link/..` leaves the target's parent), `..` climbs the real parent.
 * Dangling links are followed too, because writing through one creates its target. Once a segment does
 * not exist, the rest is joined lexically (nothing below it can be a link yet).
 */
function walk(start: string, segments: string[]): string {
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
 * when they differ, so a rule is tested against every location the call could reach.
 */
export function canonicalPaths(root: string, input: string): string[] {
  if (input.includes('\0')) throw new Error(`the path ${JSON.stringify(input)} contains a NUL byte`)
  const segments = input.split('/')
  const lexical = realLexical(resolve(root, input))
  // Without `..` both readings walk the same segments.
  if (!segments.includes('..')) return [lexical]
  const physical = walk(isAbsolute(input) ? '/' : root, segments)
  return physical === lexical ? [physical] : [physical, lexical]
}

/** One native realpath when the path exists (the common case); the walk handles missing tails and dangling links. */
function realLexical(absolute: string): string {
  try {
    return realpathSync.native(absolute)
  } catch {
    return walk('/', absolute.split('/'))
  }
}

/** The form a rule glob is matched against. */
export function formOf(root: string, real: string): PathForm {
  if (real === root) return { real, relative: '.' }
  const prefix = root === '/' ? '/' : `${root}/`
  return real.startsWith(prefix) ? { real, relative: real.slice(prefix.length) } : { real }
}

/** A tool's path declarations, with pointers parsed once per definition. */
interface Declared {
  pointer: Pointer
  source: string
  access: Access
  default?: string
}

const declarations = new WeakMap<ToolDefinition, Declared[]>()

function declared(definition: ToolDefinition): Declared[] {
  let list = declarations.get(definition)
  if (!list) {
    list = (definition.paths ?? []).map((path) => ({ pointer: parsePointer(path.pointer), source: path.pointer, access: path.access, default: path.default }))
    declarations.set(definition, list)
  }
  return list
}

/** The files restrictive rules name exactly, found by device and inode (see `identity.ts`). */
export interface NamedFiles {
  formsOf(dev: bigint, ino: bigint): PathForm[]
}

/**
 * Resolves the paths a call declares (per tool definition) to real locations, once per call, and keeps
 * what the tool later reports it opened for the call (`add`), so every later rule check of the call sees
 * that too. A value that is not a string, or a path that cannot be resolved, throws: callers fail closed.
 */
export class CallPathResolver {
  /** Set once the rules are compiled; a file with other names is also each name a rule gives it. */
  named: NamedFiles = { formsOf: () => [] }
  private readonly calls = new WeakMap<ToolExec, CallPath[]>()

  constructor(
    private readonly root: string,
    private readonly lookup: (name: string) => ToolDefinition | undefined,
  ) {}

  /** The paths of `exec`, resolved on first use. */
  readonly resolve = (exec: ToolExec): CallPath[] => {
    let paths = this.calls.get(exec)
    if (paths) return paths
    const definition = this.lookup(exec.name)
    paths = []
    for (const path of definition ? declared(definition) : []) {
      const values: JsonValue[] = resolveAll(exec.arguments, path.pointer)
      if (values.length === 0 && path.default !== undefined) values.push(path.default)
      for (const value of values) {
        if (typeof value !== 'string') throw new Error(`the path argument ${path.source} of ${exec.name} is not a string, so it cannot be checked`)
        paths.push({ access: path.access, forms: this.formsOf(canonicalPaths(this.root, value)) })
      }
    }
    this.calls.set(exec, paths)
    return paths
  }

  /** Adds a location the tool reached for `exec` (after `resolve`): later checks of the call cover it too. */
  add(exec: ToolExec, path: CallPath): void {
    this.resolve(exec).push(path)
  }

  /** The forms of real paths, plus the names rules give a file that has other names (a hard link). */
  private formsOf(reals: string[]): PathForm[] {
    const forms = reals.map((real) => formOf(this.root, real))
    for (const real of reals) {
      const stats = lstatSync(real, { bigint: true, throwIfNoEntry: false })
      if (stats && !stats.isDirectory() && stats.nlink > 1n) forms.push(...this.named.formsOf(stats.dev, stats.ino))
    }
    return forms
  }
}
