import { TOOL_NAME_PATTERN } from '@cordage/core'

const INVALID = /[^a-zA-Z0-9_-]/g
const MAX = 64

/** FNV-1a 32-bit of `value`, as 8 lowercase hex digits: a short, stable disambiguator. */
export function shortHash(value: string): string {
  let hash = 0x811c9dc5
  for (let index = 0; index < value.length; index++) {
    hash ^= value.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** Replaces every character outside `[a-zA-Z0-9_-]` with `_` (an empty name becomes `_`). */
export function sanitize(name: string): string {
  return name.replace(INVALID, '_') || '_'
}

/**
 * Maps a server's tool names to registry names, deterministically and independently of list order:
 * `mcp__<server>__<tool>` with invalid characters replaced by `_`. A tool keeps that plain name when it
 * fits in 64 characters and is the only tool of the server mapping to it, or when its original name is
 * already valid and it competes only with rewritten names. Every other tool gets the plain name cut to
 * 55 characters plus `_<fnv1a-32 hex of the original tool name>`.
 */
export function registryNames(server: string, tools: readonly string[]): Map<string, string> {
  const prefix = `mcp__${sanitize(server)}__`
  const plain = new Map<string, string[]>()
  for (const tool of tools) {
    const name = prefix + sanitize(tool)
    const group = plain.get(name)
    if (group) group.push(tool)
    else plain.set(name, [tool])
  }
  const result = new Map<string, string>()
  for (const [name, group] of plain) {
    const exact = group.filter((tool) => prefix + tool === name)
    for (const tool of group) {
      const keeps = name.length <= MAX && (group.length === 1 || (exact.length === 1 && exact[0] === tool))
      result.set(tool, keeps ? name : `${name.slice(0, MAX - 9)}_${shortHash(tool)}`)
    }
  }
  for (const name of result.values()) if (!TOOL_NAME_PATTERN.test(name)) throw new Error(`internal: bad tool name ${name}`)
  return result
}
