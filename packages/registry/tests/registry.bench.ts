import Schema from 'schemastery'
import { bench } from 'vitest'
import { compileValidator, deepFreeze, defineTool, toJsonSchema, toJsonValue, type ToolRunContext } from '@cordage/core'
import type { Context } from 'cordis'
import { compare, createTestContext } from '@cordage/testing'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: Schema.object({ a: Schema.number().required(), b: Schema.number().required() }),
  output: { schema: Schema.object({ sum: Schema.number().required() }), render: (_args, value) => [{ type: 'text', text: String(value.sum) }] },
  execute: (args) => ({ sum: args.a + args.b }),
})

bench(
  '(a) dispatch overhead: ctx.tools.execute vs body + render',
  async () => {
    const ctx = await createTestContext()
    ctx.tools.register(add)
    const tools = ctx.get('tools')!
    const { execute } = tools
    const args = { a: 1, b: 2 }
    const exec = {} as ToolRunContext
    const direct = { name: 'body + render directly', fn: async () => add.output.render(args, await add.execute(args, exec)) }
    let scoped!: Context
    await ctx.plugin({ name: 'caller', inject: ['tools'], apply: (plugin: Context) => void (scoped = plugin) })
    const viaContext = { name: 'ctx.tools.execute (root Context, read per call)', fn: () => ctx.tools.execute({ name: 'add', arguments: args }) }
    const viaPlugin = { name: 'ctx.tools.execute (plugin Context, read per call)', fn: () => scoped.tools.execute({ name: 'add', arguments: args }) }
    const held = { name: 'execute (held), no listeners', fn: () => execute({ name: 'add', arguments: args }) }
    const proxied = { name: 'tools.execute (service proxy per call)', fn: () => tools.execute({ name: 'add', arguments: args }) }
    const bare = await compare('(a) no listeners', direct, [held, proxied, viaContext, viaPlugin], { iterations: 2000 })
    ctx.on('tools/pre-execute', (_exec, next) => next())
    ctx.on('tools/pre-execute', (_exec, next) => next())
    ctx.on('tools/pre-execute', (_exec, next) => next())
    ctx.on('tools/execute', (_exec, next) => next())
    ctx.on('tools/execute', (_exec, next) => next())
    ctx.on('tools/execute', (_exec, next) => next())
    ctx.on('tools/post-execute', (_exec, _result, next) => next())
    ctx.on('tools/post-execute', (_exec, _result, next) => next())
    ctx.on('tools/post-execute', (_exec, _result, next) => next())
    const listening = await compare('(a) 3 pass-through listeners on each waterfall', direct, [{ ...held, name: 'execute (held), 3 listeners each' }], {
      iterations: 2000,
    })
    const over = (name: string) => (bare[name] - bare[direct.name]).toFixed(2)
    console.log(
      `  dispatch overhead, held execute: ${over(held.name)} µs/call (target ≤ 3); natural ctx.tools.execute: ${over(viaContext.name)} µs/call root, ${over(viaPlugin.name)} µs/call plugin (target ≤ 4)`,
    )
    console.log(`  with 9 pass-through listeners: ${(listening['execute (held), 3 listeners each'] - listening[direct.name]).toFixed(2)} µs/call`)
  },
  once,
)

function grepValue(matches: number) {
  return {
    matches: Array.from({ length: matches }, (_, i) => ({
      path: `src/module-${i % 400}/file-${i % 37}.ts`,
      lineNumber: i + 1,
      line: `  const value${i} = computeSomething(input, ${i}) // match TODO: refactor this line for clarity ${'x'.repeat(i % 20)}`,
    })),
  }
}

bench(
  '(b) normalising a 10 000-match grep value vs JSON round trip + validator',
  async () => {
    const schema = toJsonSchema(
      Schema.object({
        matches: Schema.array(
          Schema.object({ path: Schema.string().required(), lineNumber: Schema.natural().required(), line: Schema.string().required() }),
        ).required(),
      }),
    )
    const validate = compileValidator(schema)
    const value = grepValue(10_000)
    console.log(`\n(b) value size: ${(JSON.stringify(value).length / 1e6).toFixed(2)} MB`)
    await compare(
      '(b) grep-shaped value',
      { name: 'JSON.parse(JSON.stringify(v)) + validator', fn: () => validate(JSON.parse(JSON.stringify(value))) },
      [
        { name: 'toJsonValue(v, { freeze }) + validator', fn: () => validate(toJsonValue(value, { freeze: true })) },
        { name: 'toJsonValue + validator + deepFreeze (separate)', fn: () => validate(deepFreeze(toJsonValue(value))) },
      ],
      { iterations: 5, rounds: 15, unit: 'ms' },
    )
  },
  once,
)

bench(
  '(c) toJsonValue + deepFreeze on a 50 000-deep nested array',
  () => {
    let root: unknown[] = []
    let node = root
    for (let i = 0; i < 50_000; i++) {
      const next: unknown[] = []
      node.push(next)
      node = next
    }
    const start = performance.now()
    root = deepFreeze(toJsonValue(root)) as unknown[]
    console.log(`\n(c) 50 000-deep array: toJsonValue + deepFreeze completed in ${(performance.now() - start).toFixed(1)} ms, frozen: ${Object.isFrozen(root)}`)
  },
  once,
)
