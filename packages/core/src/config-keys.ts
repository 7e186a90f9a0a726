import type Schema from 'schemastery'
import type { JsonSchemaNode } from './schema.js'

/** What describes a config's keys: a schemastery schema, or a JSON Schema (for zod configs, via `z.toJSONSchema`). */
export type KeyShape = Schema | JsonSchemaNode | boolean

interface Issue {
  path: string
  message: string
}

/** The keys an object level accepts; `open` when any key is, and `rest` the shape of other keys' values (a dict). */
interface Level {
  keys: Map<string, KeyShape[]>
  open: boolean
  rest?: KeyShape
}

/** Every unknown key in `value` under `shape`, each with the nearest valid key. */
export function unknownKeys(shape: KeyShape, value: unknown): Issue[] {
  const issues: Issue[] = []
  walk(shape, value, '', issues)
  return issues
}

function walk(shape: KeyShape, value: unknown, path: string, issues: Issue[]): void {
  if (value === null || typeof value !== 'object') return
  const alternatives = variants(shape)
  if (alternatives.length > 1) {
    // A union: judge the value against the alternative it fits best (matching discriminators, then fewest unknown keys).
    let best: { score: number; found: Issue[] } | undefined
    for (const alternative of alternatives) {
      const found: Issue[] = []
      walk(alternative, value, path, found)
      const score = found.length + 1000 * conflicts(alternative, value)
      if (!best || score < best.score) best = { score, found }
      if (score === 0) break
    }
    issues.push(...best!.found)
    return
  }
  const single = alternatives[0]
  if (single === undefined) return
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      const inner = itemShape(single, index)
      if (inner !== undefined) walk(inner, item, `${path}[${index}]`, issues)
    })
    return
  }
  const level = objectLevel(single)
  if (!level) return
  for (const [key, item] of Object.entries(value)) {
    const inner = level.keys.get(key) ?? (level.rest !== undefined ? [level.rest] : undefined)
    if (inner) {
      for (const shape of inner) walk(shape, item, path ? `${path}.${key}` : key, issues)
    } else if (!level.open) {
      issues.push({ path, message: unknownMessage(key, [...level.keys.keys()]) })
    }
  }
}

/** How many of the value's keys contradict a constant the alternative fixes (a discriminator like `transport`). */
function conflicts(alternative: KeyShape, value: object): number {
  const level = Array.isArray(value) ? undefined : objectLevel(alternative)
  if (!level) return 0
  let count = 0
  for (const [key, item] of Object.entries(value)) {
    for (const shape of level.keys.get(key) ?? []) {
      const fixed = constantOf(shape)
      if (fixed.length && !fixed.includes(item)) count++
    }
  }
  return count
}

function constantOf(shape: KeyShape): unknown[] {
  if (isSchemastery(shape)) return shape.type === 'const' ? [shape.value] : []
  const node = shape as Record<string, any>
  if (node && typeof node === 'object' && 'const' in node) return [node.const]
  return Array.isArray(node?.enum) ? node.enum : []
}

function isSchemastery(shape: KeyShape): shape is Schema {
  return typeof shape === 'function' && typeof (shape as Schema).type === 'string'
}

/** Unwraps wrappers and splits unions into their alternatives. */
function variants(shape: KeyShape): KeyShape[] {
  if (typeof shape === 'boolean') return []
  if (isSchemastery(shape)) {
    if (shape.type === 'union') return shape.list!.flatMap(variants)
    if (shape.type === 'lazy') return variants(lazyInner(shape))
    if (shape.inner && (shape.type === 'transform' || shape.type === 'cordage:strict-config')) return variants(shape.inner)
    return [shape]
  }
  const node = shape as Record<string, any>
  const union = node.oneOf ?? node.anyOf
  if (Array.isArray(union)) return union.flatMap(variants)
  return [shape]
}

function lazyInner(shape: Schema): Schema {
  const inner = shape.inner as Schema | undefined
  return inner && typeof inner.type === 'string' ? inner : (shape.builder as () => Schema)()
}

function itemShape(shape: KeyShape, index: number): KeyShape | undefined {
  if (isSchemastery(shape)) {
    if (shape.type === 'array') return shape.inner
    if (shape.type === 'tuple') return shape.list?.[index]
    return undefined
  }
  const node = shape as Record<string, any>
  if (Array.isArray(node.prefixItems) && index < node.prefixItems.length) return node.prefixItems[index]
  return node.items
}

function objectLevel(shape: KeyShape): Level | undefined {
  if (isSchemastery(shape)) {
    if (shape.type === 'object') return { keys: new Map(Object.entries(shape.dict ?? {}).map(([key, inner]) => [key, [inner]])), open: false }
    if (shape.type === 'dict') return { keys: new Map(), open: true, rest: shape.inner }
    if (shape.type === 'intersect') return merge(shape.list!.flatMap(variants).map(objectLevel))
    return undefined
  }
  const node = shape as Record<string, any>
  if (Array.isArray(node.allOf)) return merge([objectLevel({ ...node, allOf: undefined }), ...node.allOf.flatMap(variants).map(objectLevel)])
  const properties = node.properties as Record<string, JsonSchemaNode> | undefined
  const additional = node.additionalProperties
  if (!properties && additional === undefined) return undefined
  const level: Level = { keys: new Map(Object.entries(properties ?? {}).map(([key, inner]) => [key, [inner]])), open: false }
  if (additional === true || (typeof additional === 'object' && additional !== null) || node.patternProperties) level.open = true
  if (typeof additional === 'object' && additional !== null) level.rest = additional as JsonSchemaNode
  return level
}

function merge(levels: Array<Level | undefined>): Level | undefined {
  const present = levels.filter((level): level is Level => level !== undefined)
  if (present.length === 0) return undefined
  const keys = new Map<string, KeyShape[]>()
  for (const level of present) for (const [key, shapes] of level.keys) keys.set(key, [...(keys.get(key) ?? []), ...shapes])
  return { keys, open: present.some((level) => level.open), rest: present.find((level) => level.rest !== undefined)?.rest }
}

function unknownMessage(key: string, valid: string[]): string {
  if (valid.length === 0) return `unknown key "${key}"; this object takes no keys`
  const nearest = [...valid].sort((a, b) => distance(key, a) - distance(key, b) || a.localeCompare(b))[0]!
  return `unknown key "${key}"; did you mean "${nearest}"? (valid keys: ${valid.join(', ')})`
}

/** Optimal string alignment distance (a swap of neighbours costs 1: `whne` → `when`), case-insensitive. */
export function distance(a: string, b: string): number {
  a = a.toLowerCase()
  b = b.toLowerCase()
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}
