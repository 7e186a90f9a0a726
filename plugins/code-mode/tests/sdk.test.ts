import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type JsonSchemaNode } from '@cordage/core'
import * as codeMode from '../src/index.js'
import { describeToolSdk, generateSdk } from '../src/sdk.js'
import { lookup, setup } from './helpers.js'

const raw = (name: string, parameters: JsonSchemaNode, outputSchema: JsonSchemaNode, description = `The ${name} tool.`) => ({
  name,
  description,
  parameters,
  outputSchema,
})

describe('generateSdk', () => {
  it('declares each value type on one line, the typed tools object, ToolCallError and describeTool; arguments are left to the tool list', () => {
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
      "interface ToolOutputMap {
      grep: {matches: {path: string, lineNumber: number}[]}
      'odd-name': string | null
      }
      type ToolArgsMap = {[N in keyof ToolOutputMap]: object} // each tool's own parameters
      declare const tools: {[N in keyof ToolOutputMap]: (args: ToolArgsMap[N]) => Promise<ToolOutputMap[N]>}
      declare class ToolCallError extends Error {toolName: string; code: string; info?: {name: string, code: string}}
      declare function describeTool(name: keyof ToolOutputMap): Promise<string> // a tool's TypeScript with docs
      "
    `)
    // Neither descriptions nor argument docs: they are in each tool's own definition, and in describeTool.
    expect(sdk).not.toContain('Searches files')
    expect(sdk).not.toContain('A regular expression')
  })

  it('declares an object type that recurs once, named after the properties it appears under', () => {
    const job = {
      type: 'object',
      properties: { id: { type: 'string' }, state: { enum: ['running', 'exited'] }, exitCode: { type: ['integer', 'null'] } },
      required: ['id', 'state', 'exitCode'],
    } as JsonSchemaNode
    const stream = {
      type: 'object',
      properties: { path: { type: ['string', 'null'] }, bytes: { type: 'integer' }, note: { type: ['string', 'null'] } },
      required: ['path', 'bytes', 'note'],
    } as JsonSchemaNode
    const sdk = generateSdk([
      raw('job_kill', { type: 'object' }, { type: 'object', properties: { killed: { type: 'boolean' }, job }, required: ['killed', 'job'] }),
      raw('job_list', { type: 'object' }, { type: 'object', properties: { jobs: { type: 'array', items: job } }, required: ['jobs'] }),
      raw('run', { type: 'object' }, { type: 'object', properties: { stdout: stream, stderr: stream } }),
    ])
    expect(sdk.split('```')[0]).toContain(
      "type Job = {id: string, state: 'running' | 'exited', exitCode: number | null}\ntype StdoutOrStderr = {path: string | null, bytes: number, note: string | null}\n",
    )
    expect(sdk).toContain('job_kill: {killed: boolean, job: Job}\njob_list: {jobs: Job[]}\nrun: {stdout?: StdoutOrStderr, stderr?: StdoutOrStderr}\n')
  })

  it.each([
    ['not', { not: { type: 'string' } }, 'unknown'],
    ['recursive $ref', { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' }, '{next?: unknown}'],
    ['remote $ref', { $ref: 'https://example.com/schema' }, 'unknown'],
    ['any JSON', {}, 'JsonValue'],
    ['tuple', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }, '[string, number]'],
    ['dict', { type: 'object', additionalProperties: { type: 'boolean' } }, '{[key: string]: boolean}'],
    [
      'array of a union',
      { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { a: { const: "it's" } } }] } },
      "Array<string | {a?: 'it\\'s'}>",
    ],
    ['array of objects with unions inside', { type: 'array', items: { type: 'object', properties: { s: { enum: ['x', 'y'] } } } }, "{s?: 'x' | 'y'}[]"],
    [
      'allOf',
      { allOf: [{ type: 'object', properties: { a: { const: 1 } }, required: ['a'] }, { anyOf: [{ type: 'string' }, { type: 'number' }] }] },
      '{a: 1} & (string | number)',
    ],
  ])('%s degrades or maps precisely', (_label, schema, expected) => {
    const sdk = generateSdk([raw('t', { type: 'object' }, schema as JsonSchemaNode)])
    expect(sdk).toContain(`interface ToolOutputMap {\nt: ${expected}\n}`)
    // JsonValue is declared exactly when a value type uses it.
    expect(sdk.startsWith('type JsonValue')).toBe(expected.includes('JsonValue'))
  })

  it('is byte-identical for the same tools', () => {
    const tools = [raw('a', { type: 'object', properties: { x: { type: 'string' } } }, { type: 'number' })]
    expect(generateSdk(tools)).toBe(generateSdk(structuredClone(tools)))
  })
})

describe('describeToolSdk', () => {
  it('gives the full declaration: description, documented arguments and readonly value, escaping comment ends', () => {
    const text = describeToolSdk(
      raw(
        'odd-name',
        { type: 'object', properties: { x: { type: 'string', description: 'ends */ here' } }, required: ['x'] },
        { type: 'array', items: { type: 'object', properties: { n: { type: 'number', deprecated: true } } } },
        'First line.\nSecond line.',
      ),
    )
    expect(text).toMatchInlineSnapshot(`
      "/**
       * First line.
       * Second line.
       */
      tools["odd-name"](args: {
        /** ends *\\/ here */
        x: string
      }): Promise<ReadonlyArray<{
        /** @deprecated */
        readonly n?: number
      }>>
      "
    `)
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
    expect(first).toContain('lookup: {id: number, name: string, tags: string[], profile: {active: boolean, score?: number}}\n')
    expect(first).not.toContain('run_code:')
    expect(describeRunCode(ctx)).toBe(first)
  })

  it('changes when a tool is mounted and again when it is unmounted; programs see the same set', async () => {
    const { ctx, run } = await setup([lookup])
    const before = describeRunCode(ctx)
    const fiber = await ctx.plugin({ name: 'late', inject: ['tools'], apply: (inner: any) => inner.tools.register(extra) })
    const mounted = describeRunCode(ctx)
    expect(mounted).not.toBe(before)
    expect(mounted).toContain('extra: number[]\n')
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
