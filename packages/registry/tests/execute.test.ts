import { describe, expect, it } from 'vitest'
import type { ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { echo, rawTool } from './helpers.js'

function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(isDeepFrozen)
}

function code(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

class Point {
  x = 1
}

describe('ctx.tools.execute', () => {
  it('returns a frozen, validated value with rendered content and direct-only meta', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 'hi' } })
    expect(result).toEqual({
      isError: false,
      value: { message: 'hi', length: 2 },
      content: [{ type: 'text', text: 'echo: hi' }],
      meta: { arg: 'hi', length: 2 },
    })
    expect(isDeepFrozen(result)).toBe(true)
  })

  it('computes presentationMeta for direct calls only', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const nested = await ctx.tools.execute({ name: 'echo', arguments: { message: 'hi' }, parent: Symbol('outer') })
    expect(nested.isError).toBe(false)
    expect('meta' in nested).toBe(false)
  })

  it.each([
    ['undefined', () => undefined],
    ['a BigInt', () => ({ n: 1n })],
    ['NaN', () => ({ n: NaN })],
    ['-0', () => ({ n: -0 })],
    [
      'a cycle',
      () => {
        const value: any = {}
        value.self = value
        return value
      },
    ],
    ['a sparse array', () => [1, , 2]],
    ['a Date', () => ({ when: new Date() })],
    ['a Map', () => new Map()],
    ['a class instance', () => new Point()],
    [
      'a throwing getter',
      () => ({
        get x() {
          throw new Error('getter')
        },
      }),
    ],
  ])('turns a body returning %s into INVALID_TOOL_OUTPUT', async (_label, body) => {
    const ctx = await createTestContext()
    ctx.tools.register(rawTool('bad', body))
    const result = await ctx.tools.execute({ name: 'bad', arguments: {} })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
    expect(result.isError && result.error.info?.name).toBe('ToolOutputError')
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^Error: tool "bad" returned a value that is not JSON: \$/) })
  })

  it('turns a schema violation, a throwing renderer and a throwing presentationMeta into INVALID_TOOL_OUTPUT', async () => {
    const ctx = await createTestContext()
    ctx.tools.register({
      ...rawTool('typed', () => ({ n: 'x' })),
      output: { schema: { type: 'object', properties: { n: { type: 'number' } } }, render: () => [] },
    })
    ctx.tools.register({
      ...rawTool('render', () => 1),
      output: {
        schema: {},
        render: () => {
          throw new Error('render broke')
        },
      },
    })
    ctx.tools.register({ ...rawTool('blocks', () => 1), output: { schema: {}, render: () => [{ type: 'video' }] as any } })
    ctx.tools.register({
      ...rawTool('meta', () => 1),
      output: {
        schema: {},
        render: () => [],
        presentationMeta: () => {
          throw new Error('meta broke')
        },
      },
    })
    ctx.tools.register({ ...rawTool('meta-json', () => 1), output: { schema: {}, render: () => [], presentationMeta: () => ({ d: new Date() }) as any } })
    const results = await Promise.all(['typed', 'render', 'blocks', 'meta', 'meta-json'].map((name) => ctx.tools.execute({ name, arguments: {} })))
    expect(results.map(code)).toEqual(Array(5).fill('INVALID_TOOL_OUTPUT'))
    expect(results.map((r) => (r.isError ? r.error.message : ''))).toEqual([
      expect.stringContaining('/n: must be number'),
      expect.stringContaining('render broke'),
      expect.stringContaining('invalid content block at index 0'),
      expect.stringContaining('meta broke'),
      expect.stringContaining('is not JSON'),
    ])
  })

  it('accepts scalar, array and null output roots', async () => {
    const ctx = await createTestContext()
    ctx.tools.register({ ...rawTool('scalar', () => 42), output: { schema: { type: 'integer' }, render: (_a, v) => [{ type: 'text', text: String(v) }] } })
    ctx.tools.register({ ...rawTool('list', () => ['a']), output: { schema: { type: 'array', items: { type: 'string' } }, render: () => [] } })
    ctx.tools.register({ ...rawTool('nothing', () => null), output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'none' }] } })
    const [scalar, list, nothing] = await Promise.all(['scalar', 'list', 'nothing'].map((name) => ctx.tools.execute({ name, arguments: {} })))
    expect(scalar).toMatchObject({ isError: false, value: 42, content: [{ text: '42' }] })
    expect(list).toMatchObject({ isError: false, value: ['a'] })
    expect(nothing).toMatchObject({ isError: false, value: null, content: [{ text: 'none' }] })
  })

  it('hands renderers, post-execute listeners and callers the same deep-frozen value', async () => {
    const ctx = await createTestContext()
    const seen: unknown[] = []
    ctx.tools.register({
      ...rawTool('deep', () => ({ a: { b: [{ c: 1 }] } })),
      output: {
        schema: {},
        render: (_args, value) => {
          seen.push(value)
          return []
        },
      },
    })
    ctx.on('tools/post-execute', async (_exec, result, next) => {
      if (!result.isError) seen.push(result.value)
      return next()
    })
    const result = await ctx.tools.execute({ name: 'deep', arguments: {} })
    if (result.isError) throw new Error(result.error.message)
    seen.push(result.value)
    expect(seen).toHaveLength(3)
    for (const value of seen) {
      expect(value).toBe(result.value)
      expect(isDeepFrozen(value)).toBe(true)
    }
    expect(() => {
      ;(result.value as any).a.b.push(2)
    }).toThrow(TypeError)
  })

  it('snapshots and freezes the arguments; non-JSON arguments fail with INVALID_ARGS', async () => {
    const ctx = await createTestContext()
    let received: any
    ctx.tools.register(
      rawTool('args', (args) => {
        received = args
        return null
      }),
    )
    const input = { list: [1] }
    await ctx.tools.execute({ name: 'args', arguments: input })
    expect(received).toEqual({ list: [1] })
    expect(received).not.toBe(input)
    expect(Object.isFrozen(received.list)).toBe(true)
    const bad = await ctx.tools.execute({ name: 'args', arguments: { when: new Date() } })
    expect(code(bad)).toBe('INVALID_ARGS')
    expect(bad.isError && bad.error.message).toContain('$.when')
  })

  it('answers a call without an input object with a failed result, never a rejection', async () => {
    const ctx = await createTestContext()
    const result = await ctx.tools.execute(undefined as any)
    expect(code(result)).toBe('INVALID_ARGS')
  })

  it('validates defineTool arguments before the body runs', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 5 } })
    expect(code(result)).toBe('INVALID_ARGS')
    expect(result.content).toEqual([{ type: 'text', text: 'Error: invalid arguments for echo:\n  /message: must be string' }])
  })

  it('fails an unknown tool with UNKNOWN_TOOL naming the available tools', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const result = await ctx.tools.execute({ name: 'grep', arguments: {} })
    expect(code(result)).toBe('UNKNOWN_TOOL')
    expect(result.isError && result.error.message).toBe('unknown tool "grep"; available: echo')
  })

  it('reports a plain thrown error without info, and a CordageError with its name and code', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      rawTool('plain', () => {
        throw new Error('disk full')
      }),
    )
    ctx.tools.register(
      rawTool('string', () => {
        throw 'just text'
      }),
    )
    const plain = await ctx.tools.execute({ name: 'plain', arguments: {} })
    expect(plain).toEqual({ isError: true, error: { message: 'disk full' }, content: [{ type: 'text', text: 'Error: disk full' }] })
    const thrown = await ctx.tools.execute({ name: 'string', arguments: {} })
    expect(thrown.isError && thrown.error.message).toBe('just text')
  })

  it("settles values, promises and thenables alike, and reads a thenable's `then` once, with or without a signal", async () => {
    const ctx = await createTestContext()
    let thenReads = 0
    const bodies: Record<string, () => unknown> = {
      value: () => ({ n: 1 }),
      promise: async () => ({ n: 1 }),
      thenable: () => ({
        get then() {
          thenReads++
          return (resolve: (value: unknown) => void) => resolve({ n: 1 })
        },
      }),
      // A thenable that settles twice: the first settlement wins.
      twice: () => ({
        then: (resolve: (value: unknown) => void, reject: (error: unknown) => void) => {
          resolve({ n: 1 })
          reject(new Error('late'))
          resolve({ n: 2 })
        },
      }),
    }
    for (const [name, body] of Object.entries(bodies)) ctx.tools.register(rawTool(name, body))
    for (const signal of [undefined, new AbortController().signal]) {
      for (const name of Object.keys(bodies)) {
        const result = await ctx.tools.execute({ name, arguments: {}, signal })
        expect(result, `${name}, signal: ${signal !== undefined}`).toMatchObject({ isError: false, value: { n: 1 } })
      }
    }
    expect(thenReads).toBe(2)
  })

  it('fails a body whose thenable throws, from its `then` getter or from `then` itself, with that error', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      rawTool('getter', () => ({
        get then() {
          throw new Error('then getter')
        },
      })),
    )
    ctx.tools.register(
      rawTool('call', () => ({
        then() {
          throw new Error('then call')
        },
      })),
    )
    ctx.tools.register(rawTool('rejects', () => ({ then: (_resolve: unknown, reject: (error: unknown) => void) => reject(new Error('rejected')) })))
    for (const signal of [undefined, new AbortController().signal]) {
      expect(await ctx.tools.execute({ name: 'getter', arguments: {}, signal })).toMatchObject({ isError: true, error: { message: 'then getter' } })
      expect(await ctx.tools.execute({ name: 'call', arguments: {}, signal })).toMatchObject({ isError: true, error: { message: 'then call' } })
      expect(await ctx.tools.execute({ name: 'rejects', arguments: {}, signal })).toMatchObject({ isError: true, error: { message: 'rejected' } })
    }
  })

  it('queues deferred contexts from the body onto the result', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      rawTool('ctx', (_args, exec) => {
        exec.deferContext({ source: 'ctx', text: 'first' })
        exec.deferContext({ source: 'ctx', text: 'second' })
        return 1
      }),
    )
    const result = await ctx.tools.execute({ name: 'ctx', arguments: {} })
    expect(result.additionalContexts).toEqual([
      { source: 'ctx', text: 'first' },
      { source: 'ctx', text: 'second' },
    ])
  })

  it('emits tools/result to every observer even when one throws', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    const seen: string[] = []
    ctx.on('tools/result', () => {
      throw new Error('observer broke')
    })
    ctx.on('tools/result', (exec, result) => void seen.push(`${exec.name}:${result.isError}`))
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })
    expect(result.isError).toBe(false)
    expect(seen).toEqual(['echo:false'])
    expect(ctx.logs.some((log) => log.type === 'warn' && log.text.includes('observer broke'))).toBe(true)
  })

  it('gives each call a fresh token and the exec view DESIGN.md describes', async () => {
    const ctx = await createTestContext()
    const execs: any[] = []
    ctx.tools.register(
      rawTool('view', (_args, exec) => {
        execs.push(exec)
        return null
      }),
    )
    const controller = new AbortController()
    const parent = Symbol('parent')
    await ctx.tools.execute({ name: 'view', arguments: { a: 1 }, callId: 'c1', signal: controller.signal, parent, agent: 'main' })
    await ctx.tools.execute({ name: 'view', arguments: {} })
    expect(typeof execs[0].token).toBe('symbol')
    expect(execs[0].token).not.toBe(execs[1].token)
    expect(execs[0]).toMatchObject({ callId: 'c1', name: 'view', arguments: { a: 1 }, signal: controller.signal, parent, agent: 'main' })
    expect(execs[1].signal).toBeInstanceOf(AbortSignal)
    expect(typeof execs[1].callId).toBe('string')
    expect(execs[1].parent).toBeUndefined()
  })
})
