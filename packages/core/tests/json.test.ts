import { describe, expect, it } from 'vitest'
import { NotJsonError, deepFreeze, toJsonValue } from '../src/index.js'

function offence(value: unknown): NotJsonError {
  try {
    toJsonValue(value)
  } catch (error) {
    expect(error).toBeInstanceOf(NotJsonError)
    return error as NotJsonError
  }
  throw new Error('expected toJsonValue to reject')
}

describe('toJsonValue', () => {
  it('copies plain JSON losslessly and detaches it from the source', () => {
    const source = { a: [1, 'two', true, null, { b: 2.5 }], 'odd key': { nested: [] } }
    const copy = toJsonValue(source)
    expect(copy).toEqual(source)
    expect(copy).not.toBe(source)
    source.a.push(9)
    expect((copy as any).a).toHaveLength(5)
  })

  it('accepts null-prototype objects and copies shared (non-cyclic) references', () => {
    const bare = Object.assign(Object.create(null), { x: 1 })
    const shared = { s: 1 }
    const copy = toJsonValue({ bare, left: shared, right: shared }) as any
    expect(copy.bare).toEqual({ x: 1 })
    expect(copy.left).toEqual({ s: 1 })
    expect(copy.left).not.toBe(copy.right)
  })

  it('keeps an own "__proto__" key as data without touching the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}}')
    const copy = toJsonValue(parsed) as any
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__'])
    expect(({} as any).polluted).toBeUndefined()
  })

  it.each([
    ['undefined at the root', undefined, '$', 'undefined'],
    ['undefined in an object', { a: { b: undefined } }, '$.a.b', 'undefined'],
    ['undefined in an array', [1, undefined], '$[1]', 'undefined'],
    ['a function', { f: () => 1 }, '$.f', 'function'],
    ['a symbol', { s: Symbol('x') }, '$.s', 'symbol'],
    ['a BigInt', { n: 1n }, '$.n', 'BigInt'],
    ['NaN', [NaN], '$[0]', 'NaN'],
    ['Infinity', { x: Infinity }, '$.x', 'Infinity'],
    ['-Infinity', { x: -Infinity }, '$.x', '-Infinity'],
    ['-0', { zero: -0 }, '$.zero', '-0'],
    ['a sparse array', { list: [1, , 3] }, '$.list[1]', 'sparse'],
    ['a Date', { when: new Date(0) }, '$.when', 'Date'],
    ['a Map', { m: new Map() }, '$.m', 'Map'],
    ['a Set', [new Set()], '$[0]', 'Set'],
    ['a Buffer', { b: Buffer.from('x') }, '$.b', 'Buffer'],
    ['a typed array', { t: new Uint8Array(2) }, '$.t', 'Uint8Array'],
    ['an Error', { e: new Error('x') }, '$.e', 'Error'],
    [
      'a class instance',
      {
        p: new (class Point {
          x = 1
        })(),
      },
      '$.p',
      'Point',
    ],
    ['a key needing quotes', { 'a b': [undefined] }, '$["a b"][0]', 'undefined'],
  ])('rejects %s with its JSON path', (_label, value, path, reason) => {
    const error = offence(value)
    expect(error.code).toBe('NOT_JSON')
    expect(error.path).toBe(path)
    expect(error.message).toContain(reason)
  })

  it('rejects cycles, symbol keys, non-enumerable properties and throwing getters', () => {
    const cyclic: any = { a: { b: {} } }
    cyclic.a.b.back = cyclic
    expect(offence(cyclic).path).toBe('$.a.b.back')
    expect(offence({ [Symbol('k')]: 1 }).message).toContain('symbol-keyed')
    const hidden = Object.defineProperty({}, 'secret', { value: 1, enumerable: false })
    expect(offence({ h: hidden }).path).toBe('$.h.secret')
    const getter = {
      get boom() {
        throw new Error('nope')
      },
    }
    const error = offence({ g: getter })
    expect(error.path).toBe('$.g.boom')
    expect(error.message).toContain('nope')
  })

  it('finds cycles below the shallow-walk depth too', () => {
    const root: any = { next: null }
    let node = root
    for (let i = 0; i < 100; i++) node = node.next = { next: null }
    node.next = root.next.next
    const error = offence(root)
    expect(error.message).toContain('cycle')
    expect(error.path.split('.next').length - 1).toBe(101)
  })

  it('accepts getters that return JSON, snapshotting their value', () => {
    let count = 0
    const copy = toJsonValue({
      get n() {
        return ++count
      },
    }) as any
    expect(copy.n).toBe(1)
    expect(Object.getOwnPropertyDescriptor(copy, 'n')!.value).toBe(1)
  })

  it('freezes the copy when asked and never the source', () => {
    const source = { a: [{ b: 1 }] }
    const copy = toJsonValue(source, { freeze: true }) as any
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.a) && Object.isFrozen(copy.a[0])).toBe(true)
    expect(Object.isFrozen(source.a)).toBe(false)
  })

  it('handles 50 000-deep nesting without recursion', () => {
    let deep: unknown[] = []
    const root = deep
    for (let i = 0; i < 50_000; i++) {
      const next: unknown[] = []
      deep.push(next)
      deep = next
    }
    const copy = toJsonValue(root) as unknown[]
    let depth = 0
    for (let node = copy; node.length; node = node[0] as unknown[]) depth++
    expect(depth).toBe(50_000)
    deepFreeze(copy)
    expect(Object.isFrozen(copy)).toBe(true)
  })
})

describe('deepFreeze', () => {
  it('freezes everything reachable, in place, and tolerates cycles', () => {
    const value: any = { list: [{ x: 1 }], nested: { deeper: { y: 2 } } }
    value.nested.self = value
    expect(deepFreeze(value)).toBe(value)
    expect(Object.isFrozen(value.list[0])).toBe(true)
    expect(Object.isFrozen(value.nested.deeper)).toBe(true)
    expect(() => {
      'use strict'
      value.list.push(1)
    }).toThrow(TypeError)
  })
})
