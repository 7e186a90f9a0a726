import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { bench } from 'vitest'
import { Agent, type Message } from '@cordage/agent'
import type { ToolDefinition } from '@cordage/core'
import { startFakeOpenAI, type FakeOpenAIRequest, type FakeReply } from '@cordage/testing'
import { collect, loadModel } from './helpers.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const ROUNDS = 25

const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!

/**
 * Interleaved rounds; prints the median per call of wall time and of this process's CPU time, and each
 * variant's ratios to the first (raw fetch, the baseline) and to the second (the same read over
 * node:http, the provider's transport, so the ratio is the parsing and loop overhead alone). With the
 * server in this process both sides of every variant are counted alike; with it in a child process the CPU
 * figure is the client's alone.
 */
async function measure(title: string, variants: Array<{ name: string; fn: () => Promise<unknown> }>, iterations: number): Promise<number[]> {
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
  const walls = wall.map(median)
  const cpus = cpu.map(median)
  const lines = [`\n${title} (medians of ${ROUNDS} interleaved rounds × ${iterations}; ratios to raw fetch | to raw node:http)`]
  variants.forEach((variant, index) => {
    const w = walls[index]!
    const c = cpus[index]!
    const ratio =
      index === 0
        ? 'baseline'
        : `wall ${(w / walls[0]!).toFixed(2)}× | ${(w / walls[1]!).toFixed(2)}×, cpu ${(c / cpus[0]!).toFixed(2)}× | ${(c / cpus[1]!).toFixed(2)}×`
    lines.push(`  ${variant.name.padEnd(44)} wall ${w.toFixed(2).padStart(7)} ms  cpu ${c.toFixed(2).padStart(7)} ms  ${ratio}`)
  })
  console.log(lines.join('\n'))
  return walls
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

/** The same scripted server in a child process, so this process's CPU time is the client's alone. */
async function startChildServer(): Promise<{ baseURL: string; close: () => void }> {
  const code = `import { startFakeOpenAI } from '@cordage/testing'
    const [toolTurn, finalTurn] = JSON.parse(process.argv[1])
    const server = await startFakeOpenAI([(request) => (request.body.messages.at(-1).role === 'tool' ? finalTurn : toolTurn)], { loop: true })
    server.requests.push = () => 0
    console.log(server.baseURL)
    process.stdin.on('end', () => server.close().then(() => process.exit(0))).resume()`
  const child: ChildProcess = spawn(
    process.execPath,
    ['--conditions=cordage-source', '--import', 'tsx', '--input-type=module', '-e', code, JSON.stringify([toolTurn, finalTurn])],
    {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const [line] = await Promise.race([
    lines.next().then((next) => [String(next.value ?? '')]),
    new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the child server exited (${code})`)))),
  ])
  if (!line?.startsWith('http://')) throw new Error(`the child server printed ${JSON.stringify(line)}`)
  return {
    baseURL: line.trim(),
    close: () => {
      child.stdin!.end()
    },
  }
}

bench(
  'agent-loop overhead per turn with 3 tool calls vs a raw fetch of the same SSE',
  async () => {
    const server = await startFakeOpenAI([respond], { loop: true })
    const system = 'You look things up.'
    const task = 'Look up alpha, bravo and charlie.'

    // Record the exact bodies the agent sends, so the raw baseline fetches the same two responses.
    const recorder = await loadModel(server.baseURL)
    recorder.ctx.tools.register(lookup)
    await new Agent(recorder.ctx, { system }).run(task)
    const [toolBody, finalBody] = server.requests.slice(-2).map((request) => request.rawBody)
    await recorder.dispose()

    async function variants(baseURL: string, requests?: FakeOpenAIRequest[]) {
      const { ctx, dispose } = await loadModel(baseURL)
      ctx.tools.register(lookup)
      const model = ctx.get('model')!
      const tools = ctx.get('tools')!
      // Held once, as the loop holds the registry: no Context reads per call on either side.
      const { execute } = tools
      const url = `${baseURL}/chat/completions`
      // The provider's own request headers, so the baseline sends the same request.
      const headers = { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer sk-test' }
      const rawFetch = async (body: string) => {
        await (await fetch(url, { method: 'POST', headers, body })).text()
      }
      // The provider's transport without the provider: node:http over a keep-alive agent, body read to the end.
      const target = new URL(url)
      const agent = new http.Agent({ keepAlive: true })
      const rawHttp = (body: string) =>
        new Promise<void>((resolve, reject) => {
          const request = http.request(
            {
              hostname: target.hostname,
              port: target.port,
              path: target.pathname,
              method: 'POST',
              agent,
              headers: { ...headers, 'accept-encoding': 'identity', 'content-length': Buffer.byteLength(body) },
            },
            (response) => {
              response
                .on('data', () => {})
                .on('end', resolve)
                .on('error', reject)
            },
          )
          request.on('error', reject).end(body)
        })

      const messages: Message[] = [
        { role: 'system', content: system },
        { role: 'user', content: task },
      ]
      const schemas = tools.list()
      const providerTurn = async () => {
        const events = await collect(model.stream({ messages, tools: schemas }))
        const calls = events.flatMap((event) => (event.type === 'tool-call' ? [event.call] : []))
        if (calls.length !== 3) throw new Error(`expected 3 tool calls, got ${calls.length}`)
        await Promise.all(calls.map((call) => execute({ name: call.name, arguments: JSON.parse(call.arguments), callId: call.id })))
      }
      // The second request as the agent sends it: the assistant turn and the three rendered results appended.
      const followUp = JSON.parse(finalBody!)
        .messages.slice(2)
        .map((message: any): Message =>
          message.role === 'tool'
            ? { role: 'tool', callId: message.tool_call_id, name: 'lookup', content: [{ type: 'text', text: message.content }], isError: false }
            : {
                role: 'assistant',
                content: message.content ?? '',
                toolCalls: message.tool_calls.map((call: any) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
              },
        )
      const providerRun = async () => {
        await providerTurn()
        await collect(model.stream({ messages: [...messages, ...followUp], tools: schemas }))
      }
      // The measure: one turn through the real loop (stream, 3 parallel calls, results committed), then stop.
      const agentTurn = async () => {
        const result = await new Agent(ctx, { system }).run(task, { maxTurns: 1 })
        if (result.stopReason !== 'max-turns') throw new Error(`expected the turn to end in max-turns, got ${result.stopReason}`)
      }
      if (requests) {
        // Like with like: every variant's first request carries exactly the bytes the baseline sends.
        for (const fn of [providerTurn, agentTurn, providerRun]) {
          await fn()
          const sent = requests.filter((request) => request.rawBody === toolBody || request.rawBody === finalBody).length
          if (sent !== requests.length) throw new Error('a variant sent a request body the baseline does not')
          requests.length = 0
        }
      }
      return {
        rawFetch,
        rawHttp,
        providerTurn,
        providerRun,
        agentTurn,
        model,
        schemas,
        messages,
        ctx,
        system,
        task,
        dispose: async () => {
          agent.destroy()
          await dispose()
        },
      }
    }

    async function suite(where: string, baseURL: string, requests?: FakeOpenAIRequest[]) {
      const v = await variants(baseURL, requests)
      const walls = await measure(
        `one turn with 3 streamed tool calls, server ${where}`,
        [
          { name: 'raw fetch, SSE read to the end', fn: () => v.rawFetch(toolBody!) },
          { name: 'raw node:http, SSE read to the end', fn: () => v.rawHttp(toolBody!) },
          { name: 'provider stream only', fn: () => collect(v.model.stream({ messages: v.messages, tools: v.schemas })) },
          { name: 'provider stream + 3 × execute', fn: v.providerTurn },
          { name: 'Agent.run, one turn (loop + registry)', fn: v.agentTurn },
        ],
        40,
      )
      console.log(`  Agent.run, one turn vs raw node:http: wall ${(walls[4]! / walls[1]!).toFixed(2)}× (target ≤ 1.2×)`)
      await measure(
        `a whole run: the 3-call turn, then the final answer, server ${where}`,
        [
          {
            name: 'raw fetch × 2, read to the end',
            fn: async () => {
              await v.rawFetch(toolBody!)
              await v.rawFetch(finalBody!)
            },
          },
          {
            name: 'raw node:http × 2, read to the end',
            fn: async () => {
              await v.rawHttp(toolBody!)
              await v.rawHttp(finalBody!)
            },
          },
          { name: 'provider × 2 + 3 × execute', fn: v.providerRun },
          { name: 'Agent.run (loop + registry + provider)', fn: () => new Agent(v.ctx, { system: v.system }).run(v.task) },
        ],
        20,
      )
      if (requests) requests.length = 0
      await v.dispose()
    }

    server.requests.length = 0
    await suite('in this process (cpu counts both sides)', server.baseURL, server.requests)
    await server.close()
    const child = await startChildServer()
    try {
      await suite('in a child process (cpu is the client only)', child.baseURL)
    } finally {
      child.close()
    }
  },
  once,
)
