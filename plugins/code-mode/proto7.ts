import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import * as codeMode from './src/index.js'
const ctx = await createTestContext()
await ctx.plugin({ name: 't', inject: ['tools'], apply: (ctx: any) => { ctx.tools.register(defineTool({ name: 'add', description: 'Adds.', parameters: Schema.object({ a: Schema.number().required(), b: Schema.number().required() }), output: { schema: Schema.object({ sum: Schema.number().required() }), render: (_a: any, v: any) => [{ type: 'text', text: String(v.sum) }] }, execute: (args: any) => ({ sum: args.a + args.b }), concurrency: 'parallel' })) } })
await ctx.plugin(codeMode, {})
for (let round = 0; round < 3; round++) {
  const t0 = performance.now()
  for (let i = 0; i < 200; i++) await ctx.tools.execute({ name: 'run_code', arguments: { code: 'return 1' } })
  console.log('cold ms', (performance.now() - t0) / 200)
  const t1 = performance.now()
  await ctx.tools.execute({ name: 'run_code', arguments: { code: 'for (let i = 0; i < 5000; i++) await tools.add({a:i,b:0})' } })
  console.log('per call µs', (performance.now() - t1) * 1000 / 5000)
  const t2 = performance.now()
  for (let i = 0; i < 5000; i++) await ctx.tools.execute({ name: 'add', arguments: {a:i,b:0}, parent: Symbol() })
  console.log('direct µs', (performance.now() - t2) * 1000 / 5000)
}
