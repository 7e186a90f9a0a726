import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type JsonSchemaNode } from '@cordage/core'
import * as codeMode from '../src/index.js'
import { generateSdk } from '../src/sdk.js'
import { lookup, setup } from './helpers.js'

const raw = (name: string, parameters: JsonSchemaNode, outputSchema: JsonSchemaNode, description = `The ${name} tool.`) => ({
  name,
  description,
  parameters,
  outputSchema,
})

describe('generateSdk', () => {
  it('declares ToolArgsMap, ToolOutputMap, ToolCallError and the typed tools object', () => {
    const sdk = generateSdk([
      raw(
        'grep',
        {
          type: 'object',
          properties: { pattern: { type: 'string', description: 'A regular expression' }, limit: { type: 'integer' } },
          required: ['pattern'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: {
            matches: {
              type: 'array',
              items: { type: 'object', properties: { path: { type: 'string' }, lineNumber: { type: 'integer' } }, required: ['path', 'lineNumber'] },
            },
          },
          required: ['matches'],
        },
        'Searches files.\nSecond line is left out.',
      ),
      raw('odd-name', { type: 'object', properties: { 'with space': { enum: ['a', 'b', 1, null] } } }, { type: ['string', 'null'] }),
    ])
    expect(sdk).toMatchInlineSnapshot(`
      "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

      /** Arguments of each tool, by tool name. */
      interface ToolArgsMap {
        grep: {
          /** A regular expression */
          pattern: string
          limit?: number
        }
        "odd-name": {
          "with space"?: "a" | "b" | 1 | null
        }
      }

      /** The value each tool resolves to (deep-frozen), by tool name. */
      interface ToolOutputMap {
        grep: {
          readonly matches: ReadonlyArray<{
            readonly path: string
            readonly lineNumber: number
          }>
        }
        "odd-name": string | null
      }

      /** Thrown (rejected) when a tool call fails: denied, invalid arguments, or the tool failed. */
      declare class ToolCallError extends Error {
        readonly toolName: string
      }

      /** Every tool the program may call: \`await tools.name(args)\`, or \`tools["odd-name"](args)\`. */
      declare const tools: {
        /** Searches files. */
        grep(args: ToolArgsMap["grep"]): Promise<ToolOutputMap["grep"]>
        /** The odd-name tool. */
        "odd-name"(args: ToolArgsMap["odd-name"]): Promise<ToolOutputMap["odd-name"]>
      }

      /** Captured output: each call appends one line (strings raw, other values as JSON). */
      declare const console: { log(...values: unknown[]): void; info(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void; debug(...values: unknown[]): void }
      "
    `)
  })

  it.each([
    ['not', { not: { type: 'string' } }, 'unknown'],
    [
      'recursive $ref',
      { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' },
      '{\n    readonly next?: unknown\n  }',
    ],
    ['remote $ref', { $ref: 'https://example.com/schema' }, 'unknown'],
    ['any JSON', {}, 'JsonValue'],
    ['tuple', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }, 'readonly [string, number]'],
    ['dict', { type: 'object', additionalProperties: { type: 'boolean' } }, '{ readonly [key: string]: boolean }'],
    [
      'allOf',
      { allOf: [{ type: 'object', properties: { a: { const: 1 } }, required: ['a'] }, { anyOf: [{ type: 'string' }, { type: 'number' }] }] },
      '{\n    readonly a: 1\n  } & (string | number)',
    ],
    [
      'description escape',
      { type: 'object', properties: { x: { type: 'string', description: 'ends */ here' } }, required: ['x'] },
      '{\n    /** ends *\\/ here */\n    readonly x: string\n  }',
    ],
  ])('%s degrades or maps precisely', (_label, schema, expected) => {
    const sdk = generateSdk([raw('t', { type: 'object' }, schema as JsonSchemaNode)])
    expect(sdk).toContain(`interface ToolOutputMap {\n  t: ${expected}\n}`)
  })

  it('is byte-identical for the same tools', () => {
    const tools = [raw('a', { type: 'object', properties: { x: { type: 'string' } } }, { type: 'number' })]
    expect(generateSdk(tools)).toBe(generateSdk(structuredClone(tools)))
  })
})

describe('run_code description', () => {
  const extra = defineTool({
    name: 'extra',
    description: 'Mounted later.',
    parameters: Schema.object({ n: Schema.number().required() }),
    output: { schema: Schema.array(Schema.number()), render: (_a, v) => [{ type: 'text', text: v.join(',') }] },
    execute: (args) => [args.n],
  })
  const describeRunCode = (ctx: any) => ctx.tools.list().find((tool: any) => tool.name === 'run_code').description as string

  it('carries the SDK for every visible tool, byte-identical while the tool set is unchanged', async () => {
    const { ctx } = await setup([lookup])
    const first = describeRunCode(ctx)
    expect(first).toContain('lookup(args: ToolArgsMap["lookup"]): Promise<ToolOutputMap["lookup"]>')
    expect(first).toContain('  lookup: {\n    /** User id */\n    id: number\n  }')
    expect(first).not.toContain('ToolArgsMap["run_code"]')
    expect(describeRunCode(ctx)).toBe(first)
  })

  it('changes when a tool is mounted and again when it is unmounted; programs see the same set', async () => {
    const { ctx, run } = await setup([lookup])
    const before = describeRunCode(ctx)
    const fiber = await ctx.plugin({ name: 'late', inject: ['tools'], apply: (inner: any) => inner.tools.register(extra) })
    const mounted = describeRunCode(ctx)
    expect(mounted).not.toBe(before)
    expect(mounted).toContain('extra(args: ToolArgsMap["extra"]): Promise<ToolOutputMap["extra"]>')
    expect(mounted).toContain('  extra: ReadonlyArray<number>')
    expect((await run('return Object.keys(tools)')).isError === false && (await run('return await tools.extra({ n: 4 })'))).toMatchObject({
      value: { result: [4] },
    })
    await fiber.dispose()
    expect(describeRunCode(ctx)).toBe(before)
    expect(await run('return Object.keys(tools)')).toMatchObject({ value: { result: ['lookup'] } })
  })

  it('hides excluded tools from the SDK and from programs', async () => {
    const { ctx, run } = await setup([lookup, extra], { exclude: ['extra'] })
    expect(describeRunCode(ctx)).not.toContain('extra')
    expect(await run('return typeof tools.extra')).toMatchObject({ value: { result: 'undefined' } })
  })

  it('states the limits in the description', async () => {
    const { ctx } = await setup([], { cpuTimeMs: 1234, maxCalls: 77 })
    expect(describeRunCode(ctx)).toMatch(/1234 ms CPU.*77 tool calls/)
    expect(codeMode.name).toBe('code-mode')
  })
})
