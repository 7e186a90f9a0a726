import type { ToolExec } from '@cordage/core'
import { globToRegExp } from './glob.js'
import type { Access, CallPath, PathForm } from './paths.js'

const MAGIC = /[*?[{\\]/

/** A compiled `path` glob: relative globs match root-relative forms, absolute ones (`/etc/**`) real paths. */
export interface PathGlob {
  /** The form is the glob's match or lies under one (a rule on a directory covers what it holds). */
  covers(form: PathForm): boolean
  /** Something under the form may match (a search rooted at a directory holding a matching path); never for a known non-directory. */
  mayHoldMatch(form: PathForm): boolean
  /** The one path the glob matches when it has no wildcard (`./` and trailing `/` removed), else undefined. */
  literal: string | undefined
}

/** Compiles a `path` glob; throws on a malformed glob. */
export function compilePathGlob(glob: string): PathGlob {
  const normalized = normalize(glob)
  const absolute = normalized.startsWith('/')
  const pattern = globToRegExp(normalized)
  const segments = split(normalized, absolute)
  const literal: string[] = []
  for (const segment of segments) {
    if (MAGIC.test(segment)) break
    literal.push(segment)
  }
  const wildcard = literal.length < segments.length
  const subject = (form: PathForm) => (absolute ? form.real : form.relative)
  return {
    literal: wildcard ? undefined : normalized,
    covers(form) {
      let current = subject(form)
      while (current !== undefined) {
        if (pattern.test(current)) return true
        current = parent(current)
      }
      return false
    },
    mayHoldMatch(form) {
      const current = subject(form)
      if (current === undefined || form.directory === false) return false
      const parts = split(current === '.' ? '' : current, absolute)
      for (let i = 0; i < Math.min(parts.length, literal.length); i++) if (parts[i] !== literal[i]) return false
      // The glob's fixed part lies below the form, or the form lies inside it and wildcards follow.
      return parts.length < literal.length || wildcard
    },
  }
}

/**
 * Spells a glob the way canonical paths are spelled: no empty or `.` segment (`a//./b/` is `a/b`). A `..`
 * segment is refused: canonical paths never hold one, so the rule would silently match nothing.
 */
function normalize(glob: string): string {
  const segments = glob.split('/').filter((segment) => segment !== '' && segment !== '.')
  if (segments.includes('..')) throw new Error('a ".." segment never matches a canonical path; write the path it leads to')
  if (glob.startsWith('/')) return `/${segments.join('/')}`
  return segments.length ? segments.join('/') : '.'
}

function split(path: string, absolute: boolean): string[] {
  return (absolute ? path.slice(1) : path).split('/').filter((segment) => segment !== '')
}

/** `a/b` → `a` → `.` → none; `/a/b` → `/a` → `/` → none. */
function parent(path: string): string | undefined {
  if (path === '.' || path === '/') return undefined
  const index = path.lastIndexOf('/')
  if (index < 0) return '.'
  return index === 0 ? '/' : path.slice(0, index)
}

/**
 * The call-level test of a path rule. `allow` must cover every path the call declares (so allowing one
 * argument never allows another), with the same access. Other actions match when any path of that
 * access is covered or may hold a match; writing includes reading, so a `read` rule also matches writes.
 */
export function pathCallMatcher(glob: PathGlob, access: Access | undefined, allow: boolean, resolvePaths: (exec: ToolExec) => CallPath[]) {
  // A path value's forms are the same objects while its resolution stays cached: each is tested once.
  const covered = new WeakMap<PathForm, boolean>()
  const covers = (form: PathForm) => {
    let verdict = covered.get(form)
    if (verdict === undefined) covered.set(form, (verdict = glob.covers(form)))
    return verdict
  }
  if (allow) {
    return (exec: ToolExec) => {
      const paths = resolvePaths(exec)
      return paths.length > 0 && paths.every((path) => (access === undefined || path.access === access) && path.forms.every(covers))
    }
  }
  const touched = new WeakMap<PathForm, boolean>()
  const touches = (form: PathForm) => {
    let verdict = touched.get(form)
    if (verdict === undefined) touched.set(form, (verdict = glob.covers(form) || glob.mayHoldMatch(form)))
    return verdict
  }
  const relevant = (path: CallPath) => access === undefined || path.access === access || (access === 'read' && path.access === 'write')
  return (exec: ToolExec) => resolvePaths(exec).some((path) => relevant(path) && path.forms.some(touches))
}
