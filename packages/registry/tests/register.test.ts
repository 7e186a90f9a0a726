import { describe, expect, it } from 'vitest'
import { CordageError } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { echo, rawTool } from './helpers.js'

async function registrationError(definition: any): Promise<CordageError> {
  const ctx = await createTestContext()
  let caught: unknown
  try {
    ctx.tools.register(definition)
  } catch (error) {
    caught = error
  }
  expect(CordageError.is(caught), 'register should throw a CordageError').toBe(true)
  expect(ctx.tools.list()).toEqual([])
  return caught as CordageError
}

describe('ctx.tools.register', () => {
  it('lists registered tools sorted by name with their schemas', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(rawTool('zeta', () => 1))
    ctx.tools.register(echo)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['echo', 'zeta'])
    expect(ctx.tools.list()[0]).toEqual({ name: 'echo', description: echo.description, parameters: echo.parameters, outputSchema: echo.output.schema })
    expect(ctx.tools.get('echo')).toBe(echo)
  })

  it('lists annotations as a frozen copy checked at registration, and nothing for tools without them', async () => {
    const ctx = await createTestContext()
    const annotations = { readOnlyHint: true, openWorldHint: false }
    ctx.tools.register({ ...rawTool('look', () => 1), annotations })
    ctx.tools.register(echo)
    const [listedEcho, look] = ctx.tools.list()
    expect(look!.annotations).toEqual({ readOnlyHint: true, openWorldHint: false })
    expect(Object.isFrozen(look!.annotations)).toBe(true)
    expect('annotations' in listedEcho!).toBe(false)
    // A consumer of list() cannot change what others read, nor can the owner's later edits of its object.
    annotations.readOnlyHint = false
    expect(ctx.tools.list()[1]!.annotations).toEqual({ readOnlyHint: true, openWorldHint: false })
  })

  it('leaves hidden tools out of list() but still runs them through the pipeline', async () => {
    const ctx = await createTestContext()
    ctx.tools.register({ ...rawTool('secret_step', () => 7), hidden: true })
    ctx.tools.register(echo)
    const seen: string[] = []
    ctx.on('tools/result', (exec) => void seen.push(exec.name))
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['echo'])
    expect(ctx.tools.get('secret_step')?.hidden).toBe(true)
    const result = await ctx.tools.execute({ name: 'secret_step', arguments: {} })
    expect(result).toMatchObject({ isError: false, value: 7 })
    expect(seen).toEqual(['secret_step'])
  })

  it.each([
    ['a missing output', { ...rawTool('x', () => 1), output: undefined }, /output is required/],
    ['a malformed output', { ...rawTool('x', () => 1), output: { schema: {} } }, /render must be a function/],
    ['a non-object output schema', { ...rawTool('x', () => 1), output: { schema: 'string', render: () => [] } }, /output.schema must be a JSON Schema object/],
    [
      'a bad presentationMeta',
      { ...rawTool('x', () => 1), output: { schema: {}, render: () => [], presentationMeta: 1 } },
      /presentationMeta must be a function/,
    ],
    ['an invalid name', rawTool('has space', () => 1), /name must match/],
    ['a too-long name', rawTool('x'.repeat(65), () => 1), /name must match/],
    ['a non-object parameters root', { ...rawTool('x', () => 1), parameters: { type: 'string' } }, /parameters must be an object schema/],
    ['a zero timeout', rawTool('x', () => 1, { timeoutMs: 0 }), /timeoutMs must be a positive number/],
    ['a missing body', { ...rawTool('x', () => 1), execute: undefined }, /execute must be a function/],
    ['annotations that are not an object', { ...rawTool('x', () => 1), annotations: 'read-only' }, /annotations must be an object of boolean hints/],
    [
      'a misspelt annotation',
      { ...rawTool('x', () => 1), annotations: { readonlyHint: true } },
      /annotations: unknown key readonlyHint \(valid keys: readOnlyHint, /,
    ],
    ['a non-boolean annotation', { ...rawTool('x', () => 1), annotations: { readOnlyHint: 'yes' } }, /annotations.readOnlyHint must be a boolean, got string/],
    [
      'an annotation behind a getter',
      {
        ...rawTool('x', () => 1),
        annotations: {
          get readOnlyHint() {
            return true
          },
        },
      },
      /annotations.readOnlyHint must be a boolean/,
    ],
  ])('rejects %s', async (_label, definition, message) => {
    const error = await registrationError(definition)
    expect(error.message).toMatch(message)
  })

  it('rejects an unsupported raw schema listing every violation', async () => {
    const error = await registrationError({
      ...rawTool('x', () => 1),
      parameters: { type: 'object', properties: { a: { type: 'strng' } }, nullable: true },
      output: { schema: { if: {}, then: {} }, render: () => [] },
    })
    expect(error.message).toContain('parameters/nullable')
    expect(error.message).toContain('parameters/properties/a/type')
    expect(error.message).toContain('output.schema/if')
    expect(error.message).toContain('output.schema/then')
  })

  it('rejects a duplicate name and keeps the first', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    expect(() => ctx.tools.register({ ...echo })).toThrow(/already registered/)
    expect(ctx.tools.get('echo')).toBe(echo)
  })

  it('unregisters a tool when the registering plugin unloads, and emits tools/changed', async () => {
    const ctx = await createTestContext()
    const changes: string[][] = []
    ctx.on('tools/changed', () => void changes.push(ctx.tools.list().map((tool) => tool.name)))
    const fiber = await ctx.plugin({ name: 'owner', inject: ['tools'], apply: (ctx) => void ctx.tools.register(echo) })
    expect(ctx.tools.get('echo')).toBe(echo)
    await fiber.dispose()
    expect(ctx.tools.get('echo')).toBeUndefined()
    expect(changes).toEqual([['echo'], []])
  })

  it('keeps the listed schemas until tools/changed: descriptions are read once per change, and callers get their own array', async () => {
    const ctx = await createTestContext()
    let reads = 0
    const counted = rawTool('counted', () => 1)
    Object.defineProperty(counted, 'description', { enumerable: true, get: () => `read ${++reads}` })
    ctx.tools.register(counted)
    // Registration checks the description too; count from here.
    reads = 0
    const first = ctx.tools.list()
    expect(first.map((tool) => tool.description)).toEqual(['read 1'])
    expect(ctx.tools.list()[0]).toBe(first[0])
    expect(reads).toBe(1)
    expect(Object.isFrozen(first[0])).toBe(true)
    // Emptying one caller's array leaves the next caller's list whole.
    first.length = 0
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['counted'])
    // A registration is a change: the next list reads the description again and includes the new tool.
    const dispose = ctx.tools.register(echo)
    expect(ctx.tools.list().map((tool) => `${tool.name}: ${tool.description}`)).toEqual([`counted: read 2`, `echo: ${echo.description}`])
    dispose()
    expect(ctx.tools.list().map((tool) => `${tool.name}: ${tool.description}`)).toEqual(['counted: read 3'])
    expect(reads).toBe(3)
  })

  it('a description that lists the tools while the list is built sees the tools and does not replace the kept list', async () => {
    const ctx = await createTestContext()
    const nested = rawTool('nested', () => 1)
    let inner: string[] | undefined
    let depth = 0
    Object.defineProperty(nested, 'description', {
      enumerable: true,
      get: () => {
        if (depth++ === 0) inner = ctx.tools.list().map((tool) => tool.name)
        depth--
        return 'nested'
      },
    })
    ctx.tools.register(echo)
    ctx.tools.register(nested)
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['echo', 'nested'])
    expect(inner).toEqual(['echo', 'nested'])
    inner = undefined
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['echo', 'nested'])
    expect(inner).toBeUndefined()
  })

  it('returns a disposer that unregisters immediately', async () => {
    const ctx = await createTestContext()
    const dispose = ctx.tools.register(echo)
    dispose()
    expect(ctx.tools.list()).toEqual([])
    ctx.tools.register(echo)
    expect(ctx.tools.get('echo')).toBe(echo)
  })
})
