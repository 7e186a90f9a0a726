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

bench(
  'subagent round trip vs the same child agent run directly',
  async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(lookup)
    await ctx.plugin(ScriptedModel, { turns: [], routes: { 'Look up cord.': Array.from({ length: 200_000 }, () => child) } })
    await ctx.plugin(Subagents, { persist: false })
    const subagents = ctx.get('subagents')!
    const caller = { callId: 'call_bench', tool: 'subagent', signal: new AbortController().signal }
    const direct = { name: 'Agent.run (child alone)', fn: () => new Agent(ctx, { agent: 'direct', tools: { allow: ['lookup'] } }).run('Look up cord.') }
    const viaService = { name: 'ctx.subagents.run', fn: () => subagents.run({ prompt: 'Look up cord.', tools: ['lookup'] }, caller) }
    const viaTool = {
      name: 'subagent tool through the registry',
      fn: () => ctx.tools.execute({ name: 'subagent', arguments: { prompt: 'Look up cord.', tools: ['lookup'] } }),
    }
    const result = await compare('subagent round trip (scripted model, one tool call, sessions off)', direct, [viaService, viaTool], {
      iterations: 200,
      rounds: 11,
    })
    console.log(`  ratio through the tool: ${(result[viaTool.name] / result[direct.name]).toFixed(2)}× (target ≤ 1.2×)`)
  },
  once,
)
