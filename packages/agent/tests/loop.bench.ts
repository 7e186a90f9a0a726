import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, bench } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Agent, SessionLog, type CompletionRequest, type ModelEvent, type ModelService } from '../src/index.js'

// One `run` = two model turns: three parallel tool calls, then a final answer. The model is in-process,
// so these figures are the loop's own overhead (parsing, dispatch bookkeeping, commits, session writes).
const model: ModelService = {
  id: 'bench',
  async *stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    if (request.messages.at(-1)?.role === 'tool') {
      yield { type: 'text', delta: 'done' }
      yield { type: 'done', finishReason: 'stop' }
      return
    }
    for (let index = 0; index < 3; index++) yield { type: 'tool-call', call: { id: `c${index}`, name: 'lookup', arguments: `{"key":"k${index}"}` } }
    yield { type: 'done', finishReason: 'tool_calls' }
  },
}

const ctx = await createTestContext()
ctx.tools.register(
  defineTool({
    name: 'lookup',
    description: 'Looks up a key.',
    parameters: Schema.object({ key: Schema.string().required() }),
    output: { schema: Schema.object({ key: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: `found ${value.key}` }] },
    concurrency: 'parallel',
    execute: (args) => ({ key: args.key }),
  }),
)
const tools = ctx.get('tools')!
// Held once, as the loop holds the registry: the baseline reads nothing through the context per call either.
const { execute } = tools
const list = tools.list.bind(tools)
const dir = mkdtempSync(join(tmpdir(), 'agent-bench-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!

/** Interleaved rounds; prints median wall and process CPU time per call, and ratios to the first variant; returns the wall medians. */
async function measure(title: string, variants: Array<{ name: string; fn: () => Promise<unknown> }>, iterations: number, rounds: number): Promise<number[]> {
  for (const variant of variants) for (let i = 0; i < iterations; i++) await variant.fn()
  const wall = variants.map(() => [] as number[])
  const cpu = variants.map(() => [] as number[])
  for (let round = 0; round < rounds; round++) {
    for (const index of round % 2 ? [...variants.keys()].reverse() : [...variants.keys()]) {
      const cpuStart = process.cpuUsage()
      const start = performance.now()
      for (let i = 0; i < iterations; i++) await variants[index]!.fn()
      wall[index]!.push(((performance.now() - start) * 1000) / iterations)
      const used = process.cpuUsage(cpuStart)
      cpu[index]!.push((used.user + used.system) / iterations)
    }
  }
  const [baseWall, baseCpu] = [median(wall[0]!), median(cpu[0]!)]
  const lines = [`\n${title} (medians of ${rounds} interleaved rounds × ${iterations})`]
  variants.forEach((variant, index) => {
    const [w, c] = [median(wall[index]!), median(cpu[index]!)]
    const ratio = index === 0 ? 'baseline' : `wall ${(w / baseWall).toFixed(2)}×, cpu ${(c / baseCpu).toFixed(2)}×`
    lines.push(`  ${variant.name.padEnd(44)} wall ${w.toFixed(1).padStart(8)} µs  cpu ${c.toFixed(1).padStart(8)} µs  ${ratio}`)
  })
  console.log(lines.join('\n'))
  return wall.map((values) => median(values))
}

async function drain(request: CompletionRequest) {
  const calls = []
  for await (const event of model.stream(request)) if (event.type === 'tool-call') calls.push(event.call)
  return calls
}

const variants = {
  baseline: {
    name: 'stream + 3 direct executes (no loop)',
    fn: async () => {
      const calls = await drain({ messages: [{ role: 'user', content: 'go' }], tools: list() })
      await Promise.all(calls.map((call) => execute({ name: call.name, arguments: JSON.parse(call.arguments), callId: call.id })))
      await drain({ messages: [{ role: 'tool', callId: 'c0', name: 'lookup', content: [], isError: false }], tools: list() })
    },
  },
  memory: { name: 'Agent.run, in memory', fn: () => new Agent(ctx, { model }).run('go') },
  session: {
    name: 'Agent.run + session file',
    fn: async () => {
      const session = SessionLog.create({ cwd: dir, dir })
      await new Agent(ctx, { model, session }).run('go')
      await session.close(false)
    },
  },
  // The schedule before deferred flushes: an fsync at every turn boundary (2 per run here).
  everyTurn: {
    name: 'Agent.run + session file, fsync every turn',
    fn: async () => {
      const session = SessionLog.create({ cwd: dir, dir })
      const onEvent = (event: { type: string }) => void (event.type === 'turn/end' && session.sync().catch(() => {}))
      await new Agent(ctx, { model, session, onEvent }).run('go')
      await session.close(false)
    },
  },
}

// The same two schedules on a session opened once and an agent that runs again (as a conversation does):
// creating the file (about 0.2 ms on this disk) is a cost of the session, not of each run.
const openSession = SessionLog.create({ cwd: dir, dir })
// The old schedule awaited the run's last fsync, as durability 'machine' does.
const openEveryTurn = Object.assign(SessionLog.create({ cwd: dir, dir }), { durability: 'machine' as const })
const openMachine = Object.assign(SessionLog.create({ cwd: dir, dir }), { durability: 'machine' as const })
const syncEveryTurn = (event: { type: string }) => void (event.type === 'turn/end' && openEveryTurn.sync().catch(() => {}))
const agents = {
  session: new Agent(ctx, { model, session: openSession }),
  everyTurn: new Agent(ctx, { model, session: openEveryTurn, onEvent: syncEveryTurn }),
  machine: new Agent(ctx, { model, session: openMachine }),
}
const reused = {
  everyTurn: { name: 'Agent.run on an open session, fsync every turn', fn: () => agents.everyTurn.run('go') },
  machine: { name: "... durability 'machine' (run awaits its fsync)", fn: () => agents.machine.run('go') },
  session: { name: "... durability 'process' (the default)", fn: () => agents.session.run('go') },
}
afterAll(() => Promise.all([openSession.close(false), openEveryTurn.close(false), openMachine.close(false)]))

bench(
  'one run: a turn with 3 parallel tool calls, then a final answer',
  async () => {
    await measure('in-process model, loop overhead per run', [variants.baseline, variants.memory], 500, 15)
    const medians = await measure('session log cost per run', [variants.memory, variants.everyTurn, variants.session], 20, 15)
    const [memory, everyTurn, deferred] = medians
    console.log(
      `  session cost: ${(everyTurn! - memory!).toFixed(0)} µs with an fsync every turn, ${(deferred! - memory!).toFixed(0)} µs now: ${((deferred! - memory!) / (everyTurn! - memory!)).toFixed(2)}× (creating the file and close()'s fsync are in both)`,
    )
    const [memoryAgain, everyTurnOpen, machineOpen, deferredOpen] = await measure(
      'session log cost per run, session opened once',
      [variants.memory, reused.everyTurn, reused.machine, reused.session],
      20,
      15,
    )
    const share = (cost: number) => `${(cost - memoryAgain!).toFixed(0)} µs = ${((cost - memoryAgain!) / (everyTurnOpen! - memoryAgain!)).toFixed(2)}×`
    console.log(
      `  per-run session cost against an fsync every turn (${(everyTurnOpen! - memoryAgain!).toFixed(0)} µs): durability 'process' ${share(deferredOpen!)} (target ≤ 0.5×), 'machine' ${share(machineOpen!)}`,
    )
  },
  { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 },
)
