import { bench } from 'vitest'
import { Agent, type Message } from '@cordage/agent'
import type { ToolDefinition } from '@cordage/core'
import { compare, startFakeOpenAI, type FakeOpenAIRequest, type FakeReply } from '@cordage/testing'
import { collect, loadModel } from './helpers.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const lookup: ToolDefinition<{ key: string }, { key: string; value: string }> = {
  name: 'lookup',
  description: 'Looks a key up.',
  parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'], additionalProperties: false },
  output: {
    schema: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } }, required: ['key', 'value'] },
    render: (_args, value) => [{ type: 'text', text: `${value.key} = ${value.value}` }],
  },
  execute: ({ key }) => ({ key, value: key.toUpperCase().repeat(8) }),
  concurrency: 'parallel',
}

// A realistic turn: some text, then three tool calls whose arguments stream in 4-character fragments.
const toolTurn: FakeReply = {
  text: 'I will look up the three keys you asked about, then summarise what I find.',
  toolCalls: ['alpha', 'bravo', 'charlie'].map((key, index) => ({ id: `call_${index}`, name: 'lookup', arguments: { key, note: 'x'.repeat(40) } })),
}
const finalTurn: FakeReply = { text: 'alpha, bravo and charlie are all present; their values are the upper-cased keys repeated.' }
const respond = (request: FakeOpenAIRequest) => (request.body.messages.at(-1).role === 'tool' ? finalTurn : toolTurn)

bench('agent-loop overhead per turn with 3 tool calls vs a raw fetch of the same SSE', async () => {
  const server = await startFakeOpenAI([respond], { loop: true })
  const { ctx, dispose } = await loadModel(server.baseURL)
  ctx.tools.register(lookup)
  const model = ctx.get('model')!
  const tools = ctx.get('tools')!
  const system = 'You look things up.'
  const task = 'Look up alpha, bravo and charlie.'

  // Record the exact bodies the agent sends, so the raw baseline fetches the same two responses.
  await new Agent(ctx, { system }).run(task)
  const [toolBody, finalBody] = server.requests.slice(-2).map((request) => request.rawBody)
  const url = `${server.baseURL}/chat/completions`
  const headers = { 'content-type': 'application/json', authorization: 'Bearer sk-test' }
  const rawFetch = async (body: string) => { await (await fetch(url, { method: 'POST', headers, body })).text() }

  const messages: Message[] = [{ role: 'system', content: system }, { role: 'user', content: task }]
  const schemas = tools.list()
  const providerTurn = async () => {
    const events = await collect(model.stream({ messages, tools: schemas }))
    const calls = events.flatMap((event) => (event.type === 'tool-call' ? [event.call] : []))
    if (calls.length !== 3) throw new Error(`expected 3 tool calls, got ${calls.length}`)
    await Promise.all(calls.map((call) => tools.execute({ name: call.name, arguments: JSON.parse(call.arguments), callId: call.id })))
  }
  const turn = await compare('one turn: 3 streamed tool calls', { name: 'raw fetch, SSE read to the end', fn: () => rawFetch(toolBody!) }, [
    { name: 'provider stream + 3 × ctx.tools.execute', fn: providerTurn },
  ], { iterations: 40, rounds: 9, unit: 'ms' })

  const run = await compare('a whole run: 3-call turn, then the final answer', { name: 'raw fetch × 2, read to the end', fn: async () => { await rawFetch(toolBody!); await rawFetch(finalBody!) } }, [
    { name: 'Agent.run (loop + registry + provider)', fn: () => new Agent(ctx, { system }).run(task) },
  ], { iterations: 20, rounds: 9, unit: 'ms' })

  const turnRatio = turn['provider stream + 3 × ctx.tools.execute']! / turn['raw fetch, SSE read to the end']!
  const runRatio = run['Agent.run (loop + registry + provider)']! / run['raw fetch × 2, read to the end']!
  console.log(`  ratios: provider turn ${turnRatio.toFixed(2)}×, agent run ${runRatio.toFixed(2)}× (target ≤ 1.2)`)
  await dispose()
  await server.close()
}, once)
