import { bench } from 'vitest'
import { compare, createTestContext } from '@cordage/testing'
import plugin from '../src/index.js'
import { upperCase } from '../src/__name__.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

// What the registry's pipeline (argument validation, output validation, freezing, rendering) adds to the tool's own work.
bench(
  '__tool__ through ctx.tools against its bare function',
  async () => {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(plugin, {})
    // Looked up once: every property read through a Cordis context costs more than the call measured here.
    const { execute } = ctx.tools
    const text = 'the quick brown fox jumps over the lazy dog'
    const baseline = { name: 'upperCase() directly', fn: () => upperCase(text, 10_000) }
    const candidate = { name: 'ctx.tools.execute(__tool__)', fn: () => execute({ name: '__tool__', arguments: { text } }) }
    const result = await compare('__tool__', baseline, [candidate], { iterations: 1000, rounds: 15 })
    console.log(`  ratio ${(result[candidate.name] / result[baseline.name]).toFixed(2)}×`)
    await fiber.dispose()
  },
  once,
)
