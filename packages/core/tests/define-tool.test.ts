import Schema from 'schemastery'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { CordageError, ToolArgsError, ToolDefinitionError, defineTool, type ToolRunContext } from '../src/index.js'

const exec = {} as ToolRunContext

// Schemas declared as constants (inline schemas type the same; define-tool-types.test.ts pins both forms).
const greetParameters = Schema.object({ name: Schema.string().required(), times: Schema.natural().default(2) })
const greetOutput = Schema.object({ greeting: Schema.string().required() })

const greet = defineTool({
  name: 'greet',
  description: 'Greets someone.',
  parameters: greetParameters,
  output: {
    schema: greetOutput,
    render: (args, value) => {
      expectTypeOf(value.greeting).toEqualTypeOf<string>()
      // @ts-expect-error times is a number
      const wrong: boolean = args.times
      return [{ type: 'text', text: `${value.greeting} (x${args.times})${wrong ? '' : ''}` }]
    },
    presentationMeta: (args) => ({ times: args.times }),
  },
  execute(args) {
    expectTypeOf(args.name).toEqualTypeOf<string>()
    return { greeting: `hello ${args.name}`.repeat(args.times) }
  },
})

describe('defineTool', () => {
  it('converts schemas once into raw JSON Schema', () => {
    expect(greet.parameters).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, times: { type: 'integer', minimum: 0, default: 2 } },
      required: ['name'],
      additionalProperties: false,
    })
    expect(greet.output.schema).toMatchObject({ type: 'object', required: ['greeting'] })
  })

  it('applies declared defaults for the body and projectors without touching the recorded arguments', async () => {
    const args = Object.freeze({ name: 'ada' })
    expect(await greet.execute(args, exec)).toEqual({ greeting: 'hello adahello ada' })
    expect(greet.output.render(args, { greeting: 'hi' })).toEqual([{ type: 'text', text: 'hi (x2)' }])
    expect(greet.output.presentationMeta!(args, { greeting: 'hi' })).toEqual({ times: 2 })
    expect(args).toEqual({ name: 'ada' })
  })

  it('leaves argument validation to the registry: the body gets what it is given, defaults filled in', async () => {
    // The registry validates against `parameters` before any listener or body sees the arguments.
    expect(await greet.execute(Object.freeze({ name: 'bo', times: 1 }), exec)).toEqual({ greeting: 'hello bo' })
    expect(() => greet.execute({ times: 3 } as never, exec)).not.toThrow(ToolArgsError)
  })

  it('supports scalar, array and null output roots', async () => {
    const count = defineTool({
      name: 'count',
      description: 'Counts.',
      parameters: Schema.object({}),
      output: { schema: Schema.array(Schema.natural()), render: (_args, value) => [{ type: 'text', text: value.join(',') }] },
      execute: () => [1, 2, 3],
    })
    expect(count.output.schema).toEqual({ type: 'array', items: { type: 'integer', minimum: 0 } })
    expect(await count.execute({}, exec)).toEqual([1, 2, 3])
  })

  it('carries declared annotations onto the definition, and none when none are declared', () => {
    const look = defineTool({
      name: 'look',
      description: 'Looks.',
      parameters: Schema.object({}),
      output: { schema: Schema.const(null), render: () => [] },
      annotations: { readOnlyHint: true, idempotentHint: true },
      execute: () => null,
    })
    expect(look.annotations).toEqual({ readOnlyHint: true, idempotentHint: true })
    expect('annotations' in greet).toBe(false)
  })

  it('requires an object parameters schema', () => {
    expect(() =>
      defineTool({
        name: 'bad',
        description: '',
        parameters: Schema.string() as any,
        output: { schema: Schema.any(), render: () => [] },
        execute: () => null,
      }),
    ).toThrow(ToolDefinitionError)
  })
})

describe('CordageError.is', () => {
  it('recognises errors from another copy of the package by brand, not prototype', () => {
    const foreign = Object.defineProperty(new Error('x'), Symbol.for('cordage.error'), { value: true })
    expect(CordageError.is(foreign)).toBe(true)
    expect(CordageError.is(new Error('x'))).toBe(false)
  })
})
