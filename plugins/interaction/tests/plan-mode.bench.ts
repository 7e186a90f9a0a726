import Schema from 'schemastery'
import { bench } from 'vitest'
import { defineTool } from '@cordage/core'
import { compare, createTestContext } from '@cordage/testing'
import * as Interaction from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const read = defineTool({
  name: 'read_file',
  description: 'Reads.',
  parameters: Schema.object({ path: Schema.string().required() }),
  output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'ok' }] },
  paths: [{ pointer: '/path', access: 'read' }],
  execute: () => ({ ok: true }),
})

// What plan mode costs a call it lets through: the listener exists only while plan mode is active, so
// with it off dispatch should match a context without the plugin; with it on, one prepended
// pre-execute listener and a tool lookup are added.
bench(
  'plan mode: dispatch of a read-only tool',
  async () => {
    const bare = await createTestContext({ print: false })
    bare.tools.register(read)
    const off = await createTestContext({ print: false })
    off.tools.register(read)
    await off.plugin(Interaction, {})
    const on = await createTestContext({ print: false })
    on.tools.register(read)
    await on.plugin(Interaction, { planMode: true })
    const passThrough = await createTestContext({ print: false })
    passThrough.tools.register(read)
    passThrough.on('tools/pre-execute', (_exec, next) => next(), true)
    const args = { path: 'a' }
    const call = (ctx: typeof bare) => {
      const { execute } = ctx.get('tools')!
      return () => execute({ name: 'read_file', arguments: args })
    }
    const results = await compare(
      'plan mode',
      { name: 'registry only', fn: call(bare) },
      [
        { name: 'interaction loaded, plan mode off', fn: call(off) },
        { name: 'one pass-through pre-execute listener', fn: call(passThrough) },
        { name: 'plan mode on (call allowed)', fn: call(on) },
      ],
      { iterations: 2000 },
    )
    console.log(
      `  plan mode on adds ${(results['plan mode on (call allowed)']! - results['registry only']!).toFixed(2)} µs/call; a pass-through listener alone ${(results['one pass-through pre-execute listener']! - results['registry only']!).toFixed(2)} µs/call`,
    )
  },
  once,
)
