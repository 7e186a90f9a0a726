import Schema from 'schemastery'
import { bench } from 'vitest'
import { Agent } from '@cordage/agent'
import { defineTool } from '@cordage/core'
import { compare, createTestContext, ScriptedModel, type ScriptStep } from '@cordage/testing'
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
// subset) and, like any run a host can stop, with its own abort signal: the ratio is what the subagent
// layer adds (limits, the run record and guard, signal linking, the result), not the cost of an agent
// with a system prompt and a signal. The bare agent, with neither, is printed for reference.
const SYSTEM = 'You are a subagent. Answer with a concise report.'

bench(
  'subagent round trip vs the same child agent run directly',
  async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(lookup)
    await ctx.plugin(ScriptedModel, { turns: [], record: false, routes: { 'Look up cord.': Array.from({ length: 200_000 }, () => child) } })
    await ctx.plugin(Subagents, { persist: false, system: SYSTEM, maxTurns: 20 })
    const subagents = ctx.get('subagents')!
    const caller = { callId: 'call_bench', tool: 'subagent', signal: new AbortController().signal }
    const direct = {
      name: 'Agent.run (the same child alone)',
      fn: () =>
        new Agent(ctx, { agent: 'direct', system: SYSTEM, maxTurns: 20, tools: { allow: ['lookup'] } }).run('Look up cord.', {
          signal: new AbortController().signal,
        }),
    }
    const bare = {
      name: 'Agent.run (no system prompt, no signal)',
      fn: () => new Agent(ctx, { agent: 'bare', tools: { allow: ['lookup'] } }).run('Look up cord.'),
    }
    const viaService = { name: 'ctx.subagents.run', fn: () => subagents.run({ prompt: 'Look up cord.', tools: ['lookup'] }, caller) }
    const viaTool = {
      name: 'subagent tool through the registry',
      fn: () => ctx.tools.execute({ name: 'subagent', arguments: { prompt: 'Look up cord.', tools: ['lookup'] } }),
    }
    const result = await compare('subagent round trip (scripted model, one tool call, sessions off)', direct, [viaService, viaTool, bare], {
      iterations: 200,
      rounds: 11,
    })
    // Process CPU time is far less sensitive than wall time to other load on a shared machine.
    const cpu = new Map<string, number[]>([direct, viaService, viaTool].map((variant) => [variant.name, []]))
    for (let round = 0; round < 11; round++) {
      for (const variant of [direct, viaService, viaTool]) {
        const start = process.cpuUsage()
        for (let i = 0; i < 200; i++) await variant.fn()
        const used = process.cpuUsage(start)
        cpu.get(variant.name)!.push((used.user + used.system) / 200)
      }
    }
    const mid = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!
    const [cpuDirect, cpuService, cpuTool] = [direct, viaService, viaTool].map((variant) => mid(cpu.get(variant.name)!))
    console.log(
      [
        `  ratio through the tool: ${(result[viaTool.name] / result[direct.name]).toFixed(2)}× wall (target ≤ 1.2×)`,
        `  CPU time per run (median of 11 rounds × 200): ${cpuDirect!.toFixed(1)} µs direct, ${cpuService!.toFixed(1)} µs through the service → ` +
          `${(cpuService! / cpuDirect!).toFixed(2)}×, ${cpuTool!.toFixed(1)} µs through the tool → ${(cpuTool! / cpuDirect!).toFixed(2)}×`,
      ].join('\n'),
    )
  },
  once,
)
