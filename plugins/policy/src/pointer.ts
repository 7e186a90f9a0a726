import type { JsonValue } from '@cordage/core'

/** A parsed JSON pointer; the segment `*` matches every key or index at its level. */
export type Pointer = readonly string[]

const WILDCARD = '*'

/** Parses an RFC 6901 pointer (`''` is the root); throws on a missing leading `/` or a bad `~` escape. */
export function parsePointer(pointer: string): Pointer {
  if (pointer === '') return []
  if (!pointer.startsWith('/')) throw new Error(`"${pointer}" must be empty or start with "/"`)
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => {
      if (/~[^01]|~$/.test(segment)) throw new Error(`"${pointer}" has a "~" not followed by 0 or 1`)
      return segment.replace(/~1/g, '/').replace(/~0/g, '~')
    })
}

function children(value: JsonValue, segment: string): JsonValue[] {
  if (Array.isArray(value)) {
    if (segment === WILDCARD) return value
    return /^(0|[1-9]\d*)$/.test(segment) && Number(segment) < value.length ? [value[Number(segment)]!] : []
  }
  if (value !== null && typeof value === 'object') {
    if (segment === WILDCARD) return Object.values(value)
    return Object.hasOwn(value, segment) ? [value[segment]!] : []
  }
  return []
}

/** Every value `pointer` reaches in `root` (several through `*`, none when a step is missing). */
export function resolveAll(root: JsonValue, pointer: Pointer): JsonValue[] {
  // One value along a pointer without `*` (every path argument a tool declares, on every call).
  if (!pointer.includes(WILDCARD)) {
    let value: JsonValue = root
    for (const segment of pointer) {
      const next = children(value, segment)
      if (next.length === 0) return []
      value = next[0]!
    }
    return [value]
  }
  let current: JsonValue[] = [root]
  for (const segment of pointer) current = current.flatMap((value) => children(value, segment))
  return current
}

/**
 * Removes (or, with `replacement`, overwrites) what `pointer` reaches in `root`, which must be a mutable
 * copy. Array elements are removed by index (highest first). Returns how many places changed.
 */
export function redactAt(root: JsonValue, pointer: Pointer, replacement?: JsonValue): number {
  if (pointer.length === 0) return 0
  const parents = resolveAll(root, pointer.slice(0, -1))
  const last = pointer[pointer.length - 1]!
  let changed = 0
  for (const parent of parents) {
    if (Array.isArray(parent)) {
      const indexes = last === WILDCARD ? parent.map((_, index) => index) : children(parent, last).length ? [Number(last)] : []
      for (const index of indexes.sort((a, b) => b - a)) {
        if (replacement === undefined) parent.splice(index, 1)
        else parent[index] = structuredClone(replacement)
        changed++
      }
    } else if (parent !== null && typeof parent === 'object') {
      for (const key of last === WILDCARD ? Object.keys(parent) : Object.hasOwn(parent, last) ? [last] : []) {
        if (replacement === undefined) delete parent[key]
        else parent[key] = structuredClone(replacement)
        changed++
      }
    }
  }
  return changed
}
