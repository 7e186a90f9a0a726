import { errorMessage } from './failure.js'
import { NotJsonError } from './errors.js'

/** A JSON value: what survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

export interface ToJsonOptions {
  /** Freeze every copied container as it is finished (the copy is then deep-frozen). */
  freeze?: boolean
}

interface Frame {
  source: any
  target: any
  keys: string[] | null // null for arrays
  index: number
  length: number
  parent: Frame | undefined
  key: string | number | undefined // this frame's key in its parent, for error paths
  depth: number
}

// Up to this depth, cycles are found by walking the frame chain; deeper values use a Set of ancestors.
const SHALLOW = 32

function isAncestor(frame: Frame, value: object, active: Set<object> | undefined): boolean {
  if (active) return active.has(value)
  for (let f: Frame | undefined = frame; f; f = f.parent) if (f.source === value) return true
  return false
}

const identifier = /^[A-Za-z_$][\w$]*$/

function pathOf(frame: Frame | undefined, leaf?: string | number): string {
  const parts: Array<string | number> = leaf === undefined ? [] : [leaf]
  for (let f = frame; f && f.key !== undefined; f = f.parent) parts.push(f.key)
  let path = '$'
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]
    path += typeof part === 'number' ? `[${part}]` : identifier.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`
  }
  return path
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined is not JSON'
  if (typeof value === 'function') return 'a function is not JSON'
  if (typeof value === 'symbol') return 'a symbol is not JSON'
  if (typeof value === 'bigint') return 'a BigInt is not JSON'
  if (typeof value === 'number') return Object.is(value, -0) ? '-0 is not JSON (it would become 0)' : `${value} is not JSON`
  const name = (value as any)?.constructor?.name
  return `a ${typeof name === 'string' && name ? name : 'non-plain object'} instance is not JSON (only plain objects and arrays are)`
}

/** `undefined` when `value` is a JSON scalar, else the reason it is not (containers return `null`). */
function scalarProblem(value: unknown): string | undefined | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? undefined : describe(value)
    case 'object':
      return value === null ? undefined : null
    default:
      return describe(value)
  }
}

/**
 * True when `source` has own keys besides its `enumerable` string keys (non-enumerable or symbol-keyed).
 * Two specific lookups cost about half of one `Reflect.ownKeys`, which is what a snapshot pays per object.
 */
function hasHiddenKeys(source: object, enumerable: number): boolean {
  return Object.getOwnPropertyNames(source).length !== enumerable || Object.getOwnPropertySymbols(source).length !== 0
}

function open(source: any, parent: Frame | undefined, key: string | number | undefined): Frame {
  if (Array.isArray(source)) {
    if (Object.getPrototypeOf(source) !== Array.prototype) throw new NotJsonError(pathOf(parent, key), describe(source))
    // oxlint-disable-next-line unicorn/no-new-array -- preallocated to the source length, then filled
    return { source, target: new Array(source.length), keys: null, index: 0, length: source.length, parent, key, depth: parent ? parent.depth + 1 : 0 }
  }
  const proto = Object.getPrototypeOf(source)
  if (proto !== Object.prototype && proto !== null) throw new NotJsonError(pathOf(parent, key), describe(source))
  const keys = Object.keys(source)
  const frame: Frame = { source, target: {}, keys, index: 0, length: keys.length, parent, key, depth: parent ? parent.depth + 1 : 0 }
  if (hasHiddenKeys(source, keys.length)) {
    const enumerable = new Set(keys)
    const hidden = Reflect.ownKeys(source).find((k) => !enumerable.has(k as string))!
    throw new NotJsonError(
      pathOf(frame, typeof hidden === 'symbol' ? hidden.toString() : hidden),
      typeof hidden === 'symbol' ? 'symbol-keyed properties are not JSON' : 'non-enumerable properties are not JSON',
    )
  }
  return frame
}

function checkArrayShape(frame: Frame): void {
  // Holes and named properties both change the own-key count; find the first for the message.
  if (Object.keys(frame.source).length === frame.length) return
  for (let i = 0; i < frame.length; i++) {
    if (!(i in frame.source)) throw new NotJsonError(pathOf(frame, i), 'sparse array hole is not JSON')
  }
  const named = Object.keys(frame.source).find((k) => !/^(0|[1-9]\d*)$/.test(k))!
  throw new NotJsonError(pathOf(frame, named), 'named properties on arrays are not JSON')
}

/**
 * Returns a detached, lossless JSON copy of `input`, or throws `NotJsonError` naming the JSON path of
 * the first offence. Iterative: depth is bounded by memory, not the call stack.
 */
export function toJsonValue(input: unknown, options?: ToJsonOptions): JsonValue {
  const problem = scalarProblem(input)
  if (problem === undefined) return input as JsonValue
  if (problem !== null) throw new NotJsonError('$', problem)
  const freeze = options?.freeze === true
  let active: Set<object> | undefined
  const root = open(input, undefined, undefined)
  if (root.keys === null) checkArrayShape(root)
  let frame: Frame | undefined = root
  while (frame) {
    const { source, target, keys } = frame
    let descended = false
    while (frame.index < frame.length) {
      const i = frame.index++
      const key = keys === null ? i : keys[i]
      let value: unknown
      try {
        value = source[key]
      } catch (error) {
        throw new NotJsonError(pathOf(frame, key), `reading the property threw: ${errorMessage(error)}`)
      }
      const reason = scalarProblem(value)
      if (reason === undefined) {
        if (keys !== null && key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
        else target[key] = value
        continue
      }
      if (reason !== null) {
        if (value === undefined && keys === null && !(key in source)) throw new NotJsonError(pathOf(frame, key), 'sparse array hole is not JSON')
        throw new NotJsonError(pathOf(frame, key), reason)
      }
      if (isAncestor(frame, value as object, active)) throw new NotJsonError(pathOf(frame, key), 'cycle: the value contains itself')
      const child = open(value, frame, key)
      if (!active && child.depth > SHALLOW) {
        active = new Set()
        for (let f: Frame | undefined = frame; f; f = f.parent) active.add(f.source)
      }
      if (child.keys === null) checkArrayShape(child)
      if (keys !== null && key === '__proto__')
        Object.defineProperty(target, key, { value: child.target, enumerable: true, writable: true, configurable: true })
      else target[key] = child.target
      active?.add(value as object)
      frame = child
      descended = true
      break
    }
    if (descended) continue
    active?.delete(source)
    if (freeze) Object.freeze(target)
    frame = frame.parent
  }
  return root.target
}

function isPlain(item: object): boolean {
  const proto = Object.getPrototypeOf(item)
  if (proto !== Object.prototype && proto !== null) return false
  // Accessors and hidden keys take the general path below.
  return !hasHiddenKeys(item, Object.keys(item).length)
}

/** Freezes `value` and everything reachable from it, in place; iterative and cycle-safe. Returns `value`. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  const seen = new Set<object>()
  const stack: object[] = [value as object]
  while (stack.length) {
    const item = stack.pop()!
    if (seen.has(item)) continue
    seen.add(item)
    Object.freeze(item)
    if (Array.isArray(item)) {
      for (let i = 0; i < item.length; i++) {
        const child = item[i]
        if (typeof child === 'object' && child !== null) stack.push(child)
      }
    } else if (isPlain(item)) {
      for (const key of Object.keys(item)) {
        const child = (item as any)[key]
        if (typeof child === 'object' && child !== null) stack.push(child)
      }
    } else {
      for (const key of Reflect.ownKeys(item)) {
        const descriptor = Reflect.getOwnPropertyDescriptor(item, key)
        const child = descriptor && 'value' in descriptor ? descriptor.value : undefined
        if ((typeof child === 'object' && child !== null) || typeof child === 'function') stack.push(child)
      }
    }
  }
  return value
}

/** True when `value` is a non-null, non-array object. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
