import Schema from 'schemastery'
import { bench } from 'vitest'
import { Agent } from '@cordage/agent'
import { defineTool } from '@cordage/core'
import { compare, createTestContext, ScriptedModel, type BenchVariant, type ScriptStep } from '@cordage/testing'
import { Subagents } from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  parameters: Schema.object({ word: Schema.string().required() }),
  output: { schema: Schema.object({ meaning: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.meaning }] },
  execute: (args) => ({ meaning: `the meaning of ${args.word}` }),
})

// The child's conversation: one tool call, then an answer. Every request replays the same two steps.
const child: ScriptStep = (request) =>
  request.messages.some((message) => message.role === 'tool') ? { text: 'found it' } : { toolCalls: [{ name: 'lookup', arguments: { word: 'cord' } }] }

// The baseline is the agent a subagent runs, configured the same (system prompt, turn limit, tool
// subset), run under the signal of the host that can stop it. Like for like, the subagent is called
// with that same signal, as a parent agent's tool call carries the parent run's signal: the ratio is
// what the subagent layer adds (the registry's dispatch of the `subagent` call, limits, the run record
// and guard, the child's signal, the result). Two reference rows, measured apart (a new AbortController
// per run leaves garbage that Node 20 is slow to collect, which must not land on the measured variants):
// a host that makes an AbortController per run, and the bare agent with no system prompt and no signal.
const SYSTEM = 'You are a subagent. Answer with a concise report.'
const ROUNDS = 31
const CALLS = 400

const sorted = (values: number[]) => [...values].sort((a, b) => a - b)
const quantile = (values: number[], q: number) => sorted(values)[Math.round((values.length - 1) * q)]!

bench(
  'subagent round trip vs the same child agent run directly',
  async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(lookup)
    await ctx.plugin(ScriptedModel, { turns: [], record: false, routes: { 'Look up cord.': Array.from({ length: 600_000 }, () => child) } })
    await ctx.plugin(Subagents, { persist: false, system: SYSTEM, maxTurns: 20 })
    // Held once, as a parent agent holds the registry: no Context property read per call.
    const { run } = ctx.get('subagents')!
    const { execute } = ctx.tools
    const host = new AbortController().signal
    const caller = { callId: 'call_bench', tool: 'subagent', signal: host }
    const arguments_ = { prompt: 'Look up cord.', tools: ['lookup'] }
    const direct: BenchVariant = {
      name: 'Agent.run (the same child, host signal)',
      fn: () => new Agent(ctx, { agent: 'direct', system: SYSTEM, maxTurns: 20, tools: { allow: ['lookup'] } }).run('Look up cord.', { signal: host }),
    }
    const viaTool: BenchVariant = { name: 'subagent tool through the registry', fn: () => execute({ name: 'subagent', arguments: arguments_, signal: host }) }
    const viaService: BenchVariant = { name: 'ctx.subagents.run', fn: () => run({ prompt: 'Look up cord.', tools: ['lookup'] }, caller) }
    const freshSignal: BenchVariant = {
      name: 'Agent.run (a new AbortController per run)',
      fn: () =>
        new Agent(ctx, { agent: 'direct', system: SYSTEM, maxTurns: 20, tools: { allow: ['lookup'] } }).run('Look up cord.', {
          signal: new AbortController().signal,
        }),
    }
    const bare: BenchVariant = {
      name: 'Agent.run (no system prompt, no signal)',
      fn: () => new Agent(ctx, { agent: 'bare', tools: { allow: ['lookup'] } }).run('Look up cord.'),
    }
    await compare('subagent round trip (scripted model, one tool call, sessions off)', direct, [viaTool, viaService], { iterations: CALLS, rounds: ROUNDS })

    // Paired rounds: each round runs the baseline and a candidate back to back, so load that comes and
    // goes on a shared machine hits both; the per-round ratios' median is the figure, in wall time and
    // in process CPU time (which other tenants' load disturbs far less).
    const paired = [viaTool, viaService]
    const wall = new Map<BenchVariant, number[]>(paired.map((variant) => [variant, []]))
    const cpu = new Map<BenchVariant, number[]>(paired.map((variant) => [variant, []]))
    const measure = async (variant: BenchVariant) => {
      const cpuStart = process.cpuUsage()
      const start = performance.now()
      for (let i = 0; i < CALLS; i++) await variant.fn()
      const used = process.cpuUsage(cpuStart)
      return [performance.now() - start, used.user + used.system] as const
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of paired) {
        const [first, second] = round % 2 ? [variant, direct] : [direct, variant]
        const a = await measure(first)
        const b = await measure(second)
        const [candidate, baseline] = first === variant ? [a, b] : [b, a]
        wall.get(variant)!.push(candidate[0] / baseline[0])
        cpu.get(variant)!.push(candidate[1] / baseline[1])
      }
    }
    const line = (variant: BenchVariant) => {
      const w = wall.get(variant)!
      const c = cpu.get(variant)!
      return `  ${variant.name.padEnd(40)} wall ${quantile(w, 0.5).toFixed(2)}× (quartiles ${quantile(w, 0.25).toFixed(2)}–${quantile(w, 0.75).toFixed(2)}), CPU ${quantile(c, 0.5).toFixed(2)}× (${quantile(c, 0.25).toFixed(2)}–${quantile(c, 0.75).toFixed(2)})`
    }
    console.log(
      [`\npaired ratios against ${direct.name} (median of ${ROUNDS} paired rounds × ${CALLS} calls; target ≤ 1.2× through the tool)`, ...paired.map(line)].join(
        '\n',
      ),
    )
    await compare('for reference: the same child run other ways', direct, [freshSignal, bare], { iterations: CALLS, rounds: ROUNDS })
  },
  once,
)
