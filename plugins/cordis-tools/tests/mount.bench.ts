import { existsSync, readdirSync, readFileSync } from 'node:fs'
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

// CPU time of each thread of this process (Linux: /proc), in ms: it hardly depends on what else the
// machine runs, unlike wall time. The main thread is the host; the others are sandbox workers (and V8's).
function threadCpu(): Map<string, number> {
  const times = new Map<string, number>()
  if (!existsSync('/proc/self/task')) return times
  for (const tid of readdirSync('/proc/self/task')) {
    const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    times.set(tid, (Number(fields[11]) + Number(fields[12])) * 10)
  }
  return times
}

/** CPU time per call of `fn` over 100 calls: the main thread's, and every other thread's together. */
async function cpuPer(fn: () => Promise<void>): Promise<string> {
  const before = threadCpu()
  for (let i = 0; i < 100; i++) await fn()
  await new Promise((resolve) => setTimeout(resolve, 200))
  let main = 0
  let others = 0
  for (const [tid, ms] of threadCpu()) {
    const used = (ms - (before.get(tid) ?? 0)) / 100
    if (tid === String(process.pid)) main += used
    else others += used
  }
  return `host thread ${main.toFixed(2)} ms, other threads ${others.toFixed(2)} ms`
}

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
    for (const variant of [baseline, candidate]) console.log(`  CPU time per round trip, ${variant.name}: ${await cpuPer(variant.fn)}`)
  },
  once,
)
