import { lstatSync } from 'node:fs'
import { canonicalPaths } from './canonical.js'
import { ResolutionCache } from './path-cache.js'
import type { JsonValue, ToolDefinition, ToolExec } from '@cordage/core'
import { parsePointer, resolveAll, type Pointer } from './pointer.js'

/** How a tool uses a path argument. */
export type Access = 'read' | 'write'

/** One spelling-independent location a call touches: its real absolute path and, inside the root, its root-relative form. */
export interface PathForm {
  real: string
  /** `/`-separated and relative to the root (`.` for the root itself); absent outside the root. */
  relative?: string
  /** False when the location is known not to be a directory (so it holds nothing a rule could name). */
  directory?: boolean
}

/** One path argument of a call, with every real location it may denote (usually one). */
export interface CallPath {
  access: Access
  forms: PathForm[]
}

/** The form a rule glob is matched against. */
export function formOf(root: string, real: string, directory?: boolean): PathForm {
  const known = directory === undefined ? {} : { directory }
  if (real === root) return { real, relative: '.', ...known }
  const prefix = root === '/' ? '/' : `${root}/`
  return real.startsWith(prefix) ? { real, relative: real.slice(prefix.length), ...known } : { real, ...known }
}

/** A tool's path declarations, with pointers parsed once per definition. */
interface Declared {
  pointer: Pointer
  source: string
  access: Access
  default?: string
}

// Path values whose resolution is kept at once (each with a watch on the directories it looked in, shared).
const CACHED_PATHS = 1024

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

/** What one path value resolves to: its forms, and the identities of those that are files with other names. */
interface Resolved {
  forms: PathForm[]
  linked: Array<{ dev: bigint; ino: bigint }>
}

/**
 * Resolves the paths a call declares (per tool definition) to real locations, once per call, and keeps
 * what the tool later reports it opened for the call (`add`), so every later rule check of the call sees
 * that too. Resolutions of a path value are cached until a directory they looked in changes (see
 * `path-cache.ts`). A value that is not a string, or a path that cannot be resolved, throws: callers fail closed.
 */
export class CallPathResolver {
  /** Set once the rules are compiled; a file with other names is also each name a rule gives it. */
  named: NamedFiles = { formsOf: () => [] }
  readonly cache: ResolutionCache<Resolved>
  private readonly calls = new WeakMap<ToolExec, CallPath[]>()
  // The guard and the pre-execute listener ask about the same call one after the other.
  private lastExec: ToolExec | undefined
  private lastPaths: CallPath[] = []

  constructor(
    private readonly root: string,
    private readonly lookup: (name: string) => ToolDefinition | undefined,
  ) {
    this.cache = new ResolutionCache(root, CACHED_PATHS)
  }

  /** The paths of `exec`, resolved on first use and the same for the rest of the call. */
  readonly resolve = (exec: ToolExec): CallPath[] => {
    if (exec === this.lastExec) return this.lastPaths
    let paths = this.calls.get(exec)
    if (!paths) {
      paths = []
      const definition = this.lookup(exec.name)
      for (const path of definition ? declared(definition) : []) {
        const values: JsonValue[] = resolveAll(exec.arguments, path.pointer)
        if (values.length === 0 && path.default !== undefined) values.push(path.default)
        for (const value of values) {
          if (typeof value !== 'string') throw new Error(`the path argument ${path.source} of ${exec.name} is not a string, so it cannot be checked`)
          paths.push({ access: path.access, forms: this.formsOf(value) })
        }
      }
      this.calls.set(exec, paths)
    }
    this.lastExec = exec
    this.lastPaths = paths
    return paths
  }

  /** Adds a location the tool reached for `exec` (after `resolve`): later checks of the call cover it too. */
  add(exec: ToolExec, path: CallPath): void {
    this.resolve(exec).push(path)
  }

  /** The forms of a path value, plus the names rules give a file that has other names (a hard link), looked up now. */
  private formsOf(value: string): PathForm[] {
    let resolved = this.cache.get(value)
    if (!resolved) {
      const looked = new Set<string>()
      const reals = canonicalPaths(this.root, value, looked)
      const linked: Resolved['linked'] = []
      const forms = reals.map((real) => {
        const stats = lstatSync(real, { bigint: true, throwIfNoEntry: false })
        if (stats && !stats.isDirectory() && stats.nlink > 1n) linked.push({ dev: stats.dev, ino: stats.ino })
        return formOf(this.root, real, stats?.isDirectory() ?? false)
      })
      resolved = { forms, linked }
      this.cache.set(value, { value: resolved, looked })
    }
    if (resolved.linked.length === 0) return resolved.forms
    return [...resolved.forms, ...resolved.linked.flatMap(({ dev, ino }) => this.named.formsOf(dev, ino))]
  }
}
