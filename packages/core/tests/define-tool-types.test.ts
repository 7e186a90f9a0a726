import { describe, expectTypeOf, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type ContentBlock, type JsonValue, type ToolDefinition } from '../src/index.js'

// Checked by `pnpm typecheck` (tsc over tests/): each `@ts-expect-error` must meet an error, at the line it
// precedes (wrong return types are reported at the offending property, not on the call).
const text = (value: string): ContentBlock[] => [{ type: 'text', text: value }]

describe('defineTool types', () => {
  it('infers argument and value types from inline schemas inside every callback', () => {
    // `toEqualTypeOf` tells `any` apart: these fail if inline schemas stop being inferred before the callbacks.
    const inline = defineTool({
      name: 'inline',
      description: 'Inline schemas.',
      parameters: Schema.object({ path: Schema.string().required(), limit: Schema.natural().default(10) }),
      output: {
        schema: Schema.object({ lines: Schema.natural().required() }),
        render: (args, value) => {
          expectTypeOf(args.path).toEqualTypeOf<string>()
          expectTypeOf(value.lines).toEqualTypeOf<number>()
          return text(`${args.path}: ${value.lines}`)
        },
        presentationMeta: (args, value) => {
          expectTypeOf(args.limit).toEqualTypeOf<number>()
          expectTypeOf(value.lines).toEqualTypeOf<number>()
          return { path: args.path, lines: value.lines }
        },
      },
      execute: (args) => {
        expectTypeOf(args.path).toEqualTypeOf<string>()
        expectTypeOf(args.limit).toEqualTypeOf<number>()
        return { lines: args.path.length }
      },
    })
    expectTypeOf(inline).toEqualTypeOf<ToolDefinition<JsonValue, { lines: number } & Record<string, any>>>()
    expectTypeOf(inline.execute).returns.toEqualTypeOf<({ lines: number } & Record<string, any>) | Promise<{ lines: number } & Record<string, any>>>()

    // Methods, destructured arguments, an async body, nested inline schemas and `execute` written first.
    defineTool({
      name: 'inline_methods',
      description: 'Inline schemas, method syntax.',
      async execute({ files }, exec) {
        expectTypeOf(files).toEqualTypeOf<string[]>()
        expectTypeOf(exec.signal).toEqualTypeOf<AbortSignal>()
        return files.map((path) => ({ path, size: path.length }))
      },
      parameters: Schema.object({ files: Schema.array(Schema.string()).required() }),
      output: {
        schema: Schema.array(Schema.object({ path: Schema.string().required(), size: Schema.natural().required() })),
        render({ files }, value) {
          expectTypeOf(files).toEqualTypeOf<string[]>()
          expectTypeOf(value[0]!.size).toEqualTypeOf<number>()
          return text(value.map((entry) => entry.path).join('\n'))
        },
      },
    })

    // A callback without parameters keeps its contextual type (content block literals stay literal).
    defineTool({
      name: 'inline_constant_render',
      description: 'A render that ignores its arguments.',
      parameters: Schema.object({ word: Schema.string().required() }),
      output: { schema: Schema.string(), render: () => [{ type: 'text', text: 'done' }] },
      execute: (args) => args.word,
    })
  })

  it('rejects misused inline arguments and wrong return types at the offending property', () => {
    const misused = defineTool({
      name: 'inline_bad_args',
      description: 'Misuses an argument.',
      parameters: Schema.object({ path: Schema.string().required() }),
      output: { schema: Schema.string(), render: (_args, value) => text(value) },
      execute: (args) => {
        // @ts-expect-error `path` is a string
        const wrong: number = args.path
        return String(wrong)
      },
    })
    // An error inside a body leaves the definition typed.
    expectTypeOf(misused).toEqualTypeOf<ToolDefinition<JsonValue, string>>()

    defineTool({
      name: 'inline_bad_render_args',
      description: 'Misuses an argument in render.',
      parameters: Schema.object({ path: Schema.string().required() }),
      output: {
        schema: Schema.object({ lines: Schema.natural().required() }),
        // @ts-expect-error `path` is a string
        render: (args) => text(args.path.toFixed()),
      },
      execute: (args) => ({ lines: args.path.length }),
    })

    defineTool({
      name: 'inline_wrong',
      description: 'Returns a string where the schema says number.',
      parameters: Schema.object({ path: Schema.string().required() }),
      output: { schema: Schema.object({ lines: Schema.natural().required() }), render: (_args, value) => text(String(value)) },
      // @ts-expect-error `lines` must be a number
      execute: (args) => ({ lines: args.path }),
    })

    defineTool({
      name: 'inline_async_wrong',
      description: 'An async body with the wrong value.',
      parameters: Schema.object({}),
      output: { schema: Schema.array(Schema.string()), render: (_args, value) => text(String(value)) },
      // @ts-expect-error the value is string[], not number[]
      execute: async (args) => [Object.keys(args).length],
    })

    defineTool({
      name: 'inline_async_wrong_arg',
      description: 'An async body returning an argument of the wrong type.',
      parameters: Schema.object({ count: Schema.natural().required() }),
      output: { schema: Schema.object({ label: Schema.string().required() }), render: (_args, value) => text(value.label) },
      // @ts-expect-error `label` must be a string, `count` is a number
      execute: async (args) => ({ label: args.count }),
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
      name: 'hoisted_async_wrong',
      description: 'An async body with the wrong shape.',
      parameters,
      output: { schema: output, render: (_args, value) => text(String(value)) },
      // @ts-expect-error `lines` must be string[], not string
      execute: async (args) => ({ lines: args.path }),
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
