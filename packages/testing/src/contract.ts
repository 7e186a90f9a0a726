import type { Plugin } from 'cordis'
import { describe, expect, it } from 'vitest'
import { checkSupportedSchema, compileValidator, type JsonValue, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, type TestContext } from './context.js'

/** One call the contract suite makes, with what it should produce. */
export interface ContractCase {
  /** Test title; defaults to `<tool> <arguments>`. */
  name?: string
  tool: string
  arguments: JsonValue
  /** Default `'success'`. */
  expect?: 'success' | 'error'
}

export interface ContractOptions {
  /** Plugin config, or a function returning it (called per context, e.g. to make a temp dir). */
  config?: unknown | (() => unknown | Promise<unknown>)
  /** Plugins to load first (e.g. `ctx.jobs` providers) in the same context. */
  before?: Array<Plugin | [Plugin, unknown]>
  /** Calls that must succeed or fail as declared, each checked for frozen, valid, bounded, pure output. */
  cases?: ContractCase[]
  /** Upper bound on the UTF-8 bytes of any rendered text content (default 100 000). */
  maxContentBytes?: number
}

type Subject = Plugin | ToolDefinition[]

const SNAKE_CASE = /^[a-z][a-z0-9_]*$/

function isDeepFrozen(value: unknown): boolean {
  const stack = [value]
  while (stack.length) {
    const item = stack.pop()
    if (typeof item !== 'object' || item === null) continue
    if (!Object.isFrozen(item)) return false
    stack.push(...Object.values(item))
  }
  return true
}

function contentBytes(result: ToolExecutionResult): number {
  return result.content.reduce((sum, block) => sum + (block.type === 'text' ? Buffer.byteLength(block.text) : 0), 0)
}

/**
 * The shared conformance suite every tool family and third-party tool package runs: names and schemas,
 * bad arguments as results (never throws), frozen and valid values, pure and total renderers, bounded
 * output, and unloading that unregisters every tool.
 */
export function testToolContract(subject: Subject, options: ContractOptions = {}): void {
  const maxBytes = options.maxContentBytes ?? 100_000
  const plugin: Plugin = Array.isArray(subject)
    ? {
        name: 'contract-tools',
        inject: ['tools'],
        apply: (ctx) => {
          for (const definition of subject) ctx.tools.register(definition)
        },
      }
    : subject

  async function setup(): Promise<{ ctx: TestContext; fiber: Awaited<ReturnType<TestContext['plugin']>>; own: string[] }> {
    const ctx = await createTestContext()
    for (const entry of options.before ?? []) {
      const [before, config] = Array.isArray(entry) ? entry : [entry, undefined]
      await ctx.plugin(before as Plugin, config)
    }
    const existing = new Set(ctx.tools.list().map((tool) => tool.name))
    const config = typeof options.config === 'function' ? await (options.config as () => unknown)() : options.config
    const fiber = await ctx.plugin(plugin, config)
    // The tools the plugin under test added (collaborators loaded by `before` keep theirs).
    const own = ctx.tools
      .list()
      .map((tool) => tool.name)
      .filter((name) => !existing.has(name))
    return { ctx, fiber, own }
  }

  describe(`tool contract: ${Array.isArray(subject) ? subject.map((d) => d.name).join(', ') : ((plugin as any).name ?? 'plugin')}`, () => {
    it('registers tools with snake_case names, descriptions and supported, compilable schemas', async () => {
      const { ctx, own } = await setup()
      const tools = ctx.tools.list().filter((tool) => own.includes(tool.name))
      expect(tools.length, 'the plugin registers at least one tool').toBeGreaterThan(0)
      for (const tool of tools) {
        expect(tool.name, `tool name ${tool.name}`).toMatch(SNAKE_CASE)
        expect(tool.description.trim().length, `${tool.name} description`).toBeGreaterThan(0)
        expect(tool.parameters.type, `${tool.name} parameters root`).toBe('object')
        expect(checkSupportedSchema(tool.parameters), `${tool.name} parameters`).toEqual([])
        expect(checkSupportedSchema(tool.outputSchema), `${tool.name} output schema`).toEqual([])
        expect(() => compileValidator(tool.outputSchema)).not.toThrow()
      }
    })

    it('turns malformed arguments into failed results, never throws', async () => {
      const { ctx, own } = await setup()
      for (const tool of ctx.tools.list().filter((tool) => own.includes(tool.name))) {
        for (const bad of [null, 42, 'text', [1, 2]] as JsonValue[]) {
          const result = await ctx.tools.execute({ name: tool.name, arguments: bad })
          expect(result.isError, `${tool.name}(${JSON.stringify(bad)})`).toBe(true)
          expect(result.content.length).toBeGreaterThan(0)
        }
        const notJson = await ctx.tools.execute({ name: tool.name, arguments: { value: 10n } })
        expect(notJson.isError && notJson.error.info?.code).toBe('INVALID_ARGS')
      }
    })

    for (const testCase of options.cases ?? []) {
      const title = testCase.name ?? `${testCase.tool} ${JSON.stringify(testCase.arguments)}`
      it(`${title}: ${testCase.expect ?? 'success'}, frozen, valid, bounded and purely rendered`, async () => {
        const { ctx } = await setup()
        const result = await ctx.tools.execute({ name: testCase.tool, arguments: testCase.arguments })
        const expected = testCase.expect ?? 'success'
        expect(result.isError, result.isError ? result.error.message : 'succeeded').toBe(expected === 'error')
        expect(isDeepFrozen(result)).toBe(true)
        expect(contentBytes(result)).toBeLessThanOrEqual(maxBytes)
        if (!result.isError) {
          const definition = ctx.tools.get(testCase.tool)!
          expect(compileValidator(definition.output.schema)(result.value)).toEqual([])
          const first = definition.output.render(testCase.arguments, result.value)
          const second = definition.output.render(testCase.arguments, result.value)
          expect(second).toEqual(first)
        }
      })
    }

    it('unregisters every tool when the plugin is unloaded', async () => {
      const { ctx, fiber, own } = await setup()
      const others = ctx.tools
        .list()
        .map((tool) => tool.name)
        .filter((name) => !own.includes(name))
      let changes = 0
      ctx.on('tools/changed', () => void changes++)
      await fiber.dispose()
      for (const name of own) expect(ctx.tools.get(name), name).toBeUndefined()
      expect(ctx.tools.list().map((tool) => tool.name)).toEqual(others)
      expect(changes).toBeGreaterThanOrEqual(own.length)
    })
  })
}
