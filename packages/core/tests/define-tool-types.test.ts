import { describe, expectTypeOf, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type ContentBlock, type JsonValue, type ToolDefinition } from '../src/index.js'

// Checked by `pnpm typecheck` (tsc over tests/): each `@ts-expect-error` must meet an error.
const text = (value: string): ContentBlock[] => [{ type: 'text', text: value }]

describe('defineTool types', () => {
  it('infers the value type from an inline output schema and rejects a wrong return type', () => {
    const inline = defineTool({
      name: 'inline',
      description: 'Inline schemas.',
      parameters: Schema.object({ path: Schema.string().required() }),
      output: { schema: Schema.object({ lines: Schema.natural().required() }), render: (_args, value) => text(String(value.lines)) },
      execute: (args) => ({ lines: String(args.path).length }),
    })
    expectTypeOf(inline).toEqualTypeOf<ToolDefinition<JsonValue, { lines: number } & Record<string, any>>>()
    expectTypeOf(inline.execute).returns.toEqualTypeOf<({ lines: number } & Record<string, any>) | Promise<{ lines: number } & Record<string, any>>>()

    defineTool({
      name: 'inline_wrong',
      description: 'Returns a string where the schema says number.',
      parameters: Schema.object({ path: Schema.string().required() }),
      output: { schema: Schema.object({ lines: Schema.natural().required() }), render: (_args, value) => text(String(value)) },
      // @ts-expect-error `lines` must be a number
      execute: (args) => ({ lines: String(args.path) }),
    })

    defineTool({
      name: 'inline_async_wrong',
      description: 'An async body with the wrong value.',
      parameters: Schema.object({}),
      output: { schema: Schema.array(Schema.string()), render: (_args, value) => text(String(value)) },
      // @ts-expect-error the value is string[], not number[]
      execute: async (args) => [Object.keys(args).length],
    })
  })

  it('infers argument and value types from hoisted schemas and rejects wrong uses', () => {
    const parameters = Schema.object({ path: Schema.string().required(), limit: Schema.natural().default(10) })
    const output = Schema.object({ lines: Schema.array(Schema.string()).required() })
    const hoisted = defineTool({
      name: 'hoisted',
      description: 'Hoisted schemas.',
      parameters,
      output: {
        schema: output,
        render: (args, value) => {
          expectTypeOf(args.path).toEqualTypeOf<string>()
          expectTypeOf(value.lines).toEqualTypeOf<string[]>()
          return text(value.lines.join('\n'))
        },
      },
      execute: (args) => {
        expectTypeOf(args.path).toEqualTypeOf<string>()
        expectTypeOf(args.limit).toEqualTypeOf<number>()
        return { lines: [args.path] }
      },
    })
    expectTypeOf(hoisted.execute).returns.toEqualTypeOf<({ lines: string[] } & Record<string, any>) | Promise<{ lines: string[] } & Record<string, any>>>()

    defineTool({
      name: 'hoisted_wrong',
      description: 'Returns the wrong shape.',
      parameters,
      output: { schema: output, render: (_args, value) => text(String(value)) },
      // @ts-expect-error `lines` must be string[]
      execute: (args) => ({ lines: args.limit }),
    })

    defineTool({
      name: 'hoisted_bad_args',
      description: 'Misuses an argument.',
      parameters,
      output: { schema: output, render: (_args, value) => text(String(value)) },
      execute: (args) => {
        // @ts-expect-error `path` is a string
        const wrong: number = args.path
        return { lines: [String(wrong)] }
      },
    })
  })
})
