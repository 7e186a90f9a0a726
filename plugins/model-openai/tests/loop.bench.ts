import { bench } from 'vitest'
import { Agent, type Message } from '@cordage/agent'
import type { ToolDefinition } from '@cordage/core'
import { startFakeOpenAI, type FakeOpenAIRequest, type FakeReply } from '@cordage/testing'
import { collect, loadModel } from './helpers.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const ROUNDS = 25

const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!

/**
 * Interleaved rounds; prints the median per call of wall time and of this process's CPU time (server and
 * client share the process, so both sides of every variant are counted alike). CPU time is what stays
 * stable on a busy machine, where wall time mostly measures waiting for a core.
 */
async function measure(title: string, variants: Array<{ name: string; fn: () => Promise<unknown> }>, iterations: number): Promise<void> {
  for (const variant of variants) for (let i = 0; i < iterations; i++) await variant.fn()
  const wall = variants.map(() => [] as number[])
  const cpu = variants.map(() => [] as number[])
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...variants.keys()].reverse() : [...variants.keys()]
    for (const index of order) {
      const cpuStart = process.cpuUsage()
      const start = performance.now()
      for (let i = 0; i < iterations; i++) await variants[index]!.fn()
      wall[index]!.push((performance.now() - start) / iterations)
      const used = process.cpuUsage(cpuStart)
      cpu[index]!.push((used.user + used.system) / 1000 / iterations)
    }
  }
  const baseWall = median(wall[0]!)
  const baseCpu = median(cpu[0]!)
  const lines = [`\n${title} (medians of ${ROUNDS} interleaved rounds × ${iterations})`]
  variants.forEach((variant, index) => {
    const w = median(wall[index]!)
    const c = median(cpu[index]!)
    const ratio = index === 0 ? 'baseline' : `wall ${(w / baseWall).toFixed(2)}×, cpu ${(c / baseCpu).toFixed(2)}×`
    lines.push(`  ${variant.name.padEnd(42)} wall ${w.toFixed(2).padStart(7)} ms  cpu ${c.toFixed(2).padStart(7)} ms  ${ratio}`)
  })
  console.log(lines.join('\n'))
}

const lookup: ToolDefinition<{ key: string }, { key: string; value: string }> = {
  name: 'lookup',
  description: 'Looks a key up.',
  parameters: { type: 'object', properties: { key: { type: 'string' }, note: { type: 'string' } }, required: ['key'], additionalProperties: false },
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
  // The second request as the agent sends it: the assistant turn and the three rendered results appended.
  const followUp = JSON.parse(finalBody!).messages.slice(2).map((message: any): Message => (message.role === 'tool'
    ? { role: 'tool', callId: message.tool_call_id, name: 'lookup', content: [{ type: 'text', text: message.content }], isError: false }
    : { role: 'assistant', content: message.content ?? '', toolCalls: message.tool_calls.map((call: any) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })) }))
  const providerRun = async () => {
    await providerTurn()
    await collect(model.stream({ messages: [...messages, ...followUp], tools: schemas }))
  }

  await measure('one turn: 3 streamed tool calls', [
    { name: 'raw fetch, SSE read to the end', fn: () => rawFetch(toolBody!) },
    { name: 'provider stream only', fn: () => collect(model.stream({ messages, tools: schemas })) },
    { name: 'provider stream + 3 × ctx.tools.execute', fn: providerTurn },
  ], 40)
  await measure('a whole run: the 3-call turn, then the final answer', [
    { name: 'raw fetch × 2, read to the end', fn: async () => { await rawFetch(toolBody!); await rawFetch(finalBody!) } },
    { name: 'provider × 2 + 3 × ctx.tools.execute', fn: providerRun },
    { name: 'Agent.run (loop + registry + provider)', fn: () => new Agent(ctx, { system }).run(task) },
  ], 20)
  await dispose()
  await server.close()
}, once)
