import { afterAll, beforeAll, bench } from 'vitest'
import type { Context, Fiber } from 'cordis'
import { compare, createTestContext, type TestContext } from '@cordage/testing'
import * as codeMode from '@cordage/plugin-code-mode'
import * as cordisTools from '../src/index.js'

// One round trip of a temporary plugin: cordis_mount of model-written code that registers one tool,
// one call of that tool, cordis_unmount. The baseline is the same plugin written for the host and
// loaded as configured plugins are (ctx.plugin, the tool called, the fiber disposed): what a mount
// adds is the sandbox session, the façade and the crossings. Target: the round trip within 10 ms.
const TARGET_MS = 10
let ctx: TestContext

const CODE = `return {
  name: 'shouting',
  apply(ctx) {
    ctx.tools.register(defineTool({
      name: 'shout',
      description: 'Upper-cases a text.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      output: { schema: { type: 'object', properties: { shouted: { type: 'string' } }, required: ['shouted'] }, render: (args, value) => [{ type: 'text', text: value.shouted }] },
      execute: async ({ text }) => ({ shouted: text.toUpperCase() + '!' }),
    }))
  },
}`

const hostPlugin = {
  name: 'shouting',
  inject: ['tools'],
  apply(inner: Context) {
    inner.tools.register({
      name: 'shout',
      description: 'Upper-cases a text.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      output: {
        schema: { type: 'object', properties: { shouted: { type: 'string' } }, required: ['shouted'] },
        render: (_args: unknown, value: any) => [{ type: 'text', text: value.shouted }],
      },
      execute: ({ text }: { text: string }) => ({ shouted: `${text.toUpperCase()}!` }),
    })
  },
}

async function expectOk(name: string, args: Record<string, unknown>): Promise<any> {
  const result = await ctx.tools.execute({ name, arguments: args })
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`)
  return result.value
}

async function mountRoundTrip(): Promise<void> {
  const handle = await expectOk('cordis_mount', { code: CODE })
  await expectOk('shout', { text: 'hi' })
  await expectOk('cordis_unmount', { id: handle.id })
}

async function hostRoundTrip(): Promise<void> {
  const fiber = await ctx.plugin(hostPlugin)
  await expectOk('shout', { text: 'hi' })
  await fiber.dispose()
}

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const fibers: Fiber[] = []

beforeAll(async () => {
  ctx = await createTestContext({ print: false })
  fibers.push(await ctx.plugin(codeMode, {}), await ctx.plugin(cordisTools, {}))
})

afterAll(async () => {
  for (const fiber of fibers.reverse()) await fiber.dispose()
})

bench(
  'cordis_mount + one call + cordis_unmount',
  async () => {
    const baseline = { name: 'the same plugin loaded in the host', fn: hostRoundTrip }
    const candidate = { name: 'cordis_mount + call + cordis_unmount', fn: mountRoundTrip }
    const result = await compare('A temporary plugin, round trip', baseline, [candidate], { iterations: 10, rounds: 15, unit: 'ms' })
    const median = result[candidate.name]! / 1000
    console.log(`  round trip median ${median.toFixed(2)} ms (target ≤ ${TARGET_MS} ms: ${median <= TARGET_MS ? 'met' : 'NOT met'})`)
  },
  once,
)
