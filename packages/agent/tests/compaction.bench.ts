import { bench } from 'vitest'
import { compare } from '@cordage/testing'
import { ContextMeter, estimateTokens, estimateToolTokens, type Message, type ModelTool } from '../src/index.js'

// The compaction decision of one turn at turn 300: the turn's two new messages (a tool call and its 1 KB
// result) are measured as they are committed, then the estimate is compared with the threshold. The
// baseline measures the whole history every turn instead.
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const tools: ModelTool[] = Array.from({ length: 20 }, (_, index) => ({
  name: `tool_${index}`,
  description: 'A tool with a few parameters, described in a sentence or two as real tools are.',
  parameters: { type: 'object', properties: { path: { type: 'string' }, limit: { type: 'integer' } }, required: ['path'] },
  outputSchema: { type: 'object' },
}))
const turn = (index: number): Message[] => [
  { role: 'assistant', content: `Reading file ${index}.`, toolCalls: [{ id: `call_${index}`, name: 'tool_1', arguments: `{"path":"src/file-${index}.ts"}` }] },
  { role: 'tool', callId: `call_${index}`, name: 'tool_1', isError: false, content: [{ type: 'text', text: `line\n`.repeat(200) }] },
]
const history: Message[] = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the bug.' },
]
for (let index = 0; index < 300; index++) history.push(...turn(index))
const next = turn(300)
const threshold = 0.8 * 200_000
let decided = 0

bench(
  'compaction decision per turn at 300 turns',
  async () => {
    const meter = new ContextMeter(history)
    const baseline = {
      name: 'recount the whole history each turn',
      fn: () => {
        let tokens = estimateToolTokens(tools)
        for (const message of history) tokens += estimateTokens(message)
        for (const message of next) tokens += estimateTokens(message)
        if (tokens >= threshold) decided++
      },
    }
    const candidate = {
      name: 'incremental meter (the agent)',
      fn: () => {
        for (const message of next) meter.add(message)
        if (meter.estimate(estimateToolTokens(tools)) >= threshold) decided++
      },
    }
    const result = await compare('compaction decision, one turn at turn 300', baseline, [candidate], { iterations: 200, rounds: 15 })
    console.log(
      `  candidate ${result[candidate.name]!.toFixed(2)} µs per turn (target ≤ 50 µs); ratio ${(result[candidate.name]! / result[baseline.name]!).toFixed(3)}× of recounting (${decided} decisions to compact)`,
    )
  },
  once,
)
