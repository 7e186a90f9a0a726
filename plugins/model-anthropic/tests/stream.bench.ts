import Anthropic from '@anthropic-ai/sdk'
import { bench } from 'vitest'
import type { CompletionRequest } from '@cordage/services'
import { compare, startFakeAnthropic, type FakeAnthropicReply } from '@cordage/testing'
import { AnthropicClient, resolveOptions } from '../src/index.js'
import { toWireBody } from '../src/wire.js'

// One streamed turn: thinking, text and three tool calls whose input streams in 4-character fragments
// (about 90 SSE events), read from the fake server over loopback HTTP. The baseline is the bare official
// SDK reading the same stream for the same request body; the candidate is the provider (body built from
// the conversation, events folded into the seam's events).
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const reply: FakeAnthropicReply = {
  thinking: 'The user wants three lookups; I will run them in parallel and then answer.',
  text: 'Let me look these keys up for you.',
  toolCalls: ['alpha', 'beta', 'gamma'].map((key, index) => ({
    id: `toolu_${index}`,
    name: 'lookup',
    arguments: { key, note: `a note about ${key} to lengthen the input` },
  })),
}
const request: CompletionRequest = {
  messages: [
    { role: 'system', content: 'You are a careful assistant. '.repeat(10) },
    { role: 'user', content: 'Look up alpha, beta and gamma.' },
  ],
  tools: [
    {
      name: 'lookup',
      description: 'Looks a key up.',
      parameters: { type: 'object', properties: { key: { type: 'string' }, note: { type: 'string' } }, required: ['key'] },
      outputSchema: { type: 'object' },
    },
  ],
}

/** Median CPU time of this process per call, in interleaved rounds (the server runs here too, alike for every variant). */
async function cpuMedians(variants: Array<{ fn: () => Promise<unknown> }>, iterations: number, rounds: number): Promise<number[]> {
  const samples = variants.map(() => [] as number[])
  for (let round = 0; round < rounds; round++) {
    for (const index of round % 2 ? [...variants.keys()].reverse() : [...variants.keys()]) {
      const start = process.cpuUsage()
      for (let i = 0; i < iterations; i++) await variants[index]!.fn()
      const used = process.cpuUsage(start)
      samples[index]!.push((used.user + used.system) / 1000 / iterations)
    }
  }
  return samples.map((values) => values.sort((a, b) => a - b)[values.length >> 1]!)
}

bench(
  'provider overhead per streamed turn',
  async () => {
    const server = await startFakeAnthropic([reply], { loop: true })
    const options = resolveOptions(
      {
        model: 'claude-haiku-4-5',
        baseURL: server.baseURL,
        apiKey: 'sk-bench',
        maxTokens: 4096,
        thinking: 'default',
        cache: true,
        maxRetries: 0,
        timeoutMs: 60_000,
        idleTimeoutMs: 60_000,
        headers: {},
        extraBody: {},
      },
      {},
    )
    const provider = new AnthropicClient(options)
    const sdk = new Anthropic({ apiKey: 'sk-bench', baseURL: server.baseURL, maxRetries: 0 })
    const body = toWireBody(request, {
      model: options.model,
      id: provider.id,
      maxTokens: 4096,
      thinking: 'default',
      cache: true,
      extraBody: {},
    }) as unknown as Anthropic.MessageCreateParamsStreaming
    let sink = 0
    const baseline = {
      name: 'bare SDK: create({ stream: true }), every event read',
      fn: async () => {
        const stream = await sdk.messages.create(body)
        for await (const event of stream) if (event) sink++
      },
    }
    // The provider always passes the SDK a signal (its own, linked to the caller's and to unloading).
    const withSignal = {
      name: 'bare SDK, with an abort signal as the provider passes',
      fn: async () => {
        const stream = await sdk.messages.create(body, { signal: new AbortController().signal })
        for await (const event of stream) if (event) sink++
      },
    }
    const candidate = {
      name: 'model-anthropic: stream(request), every event',
      fn: async () => {
        for await (const event of provider.stream(request)) if (event) sink++
      },
    }
    const result = await compare('Anthropic provider, one streamed turn (wall)', baseline, [withSignal, candidate], { iterations: 40, rounds: 15, unit: 'ms' })
    const ratio = (name: string, base: string) => (result[name]! / result[base]!).toFixed(3)
    console.log(
      `  wall: provider / bare SDK ${ratio(candidate.name, baseline.name)}× (target ≤ 1.15×); / SDK with a signal ${ratio(candidate.name, withSignal.name)}×`,
    )
    // Wall time on a shared machine mostly measures waiting; this process's CPU time is the work each side does.
    const cpu = await cpuMedians([baseline, withSignal, candidate], 40, 15)
    console.log(
      `  cpu per turn: ${cpu.map((value) => `${value.toFixed(2)} ms`).join(' / ')}; provider / bare SDK ${(cpu[2]! / cpu[0]!).toFixed(3)}×, / SDK with a signal ${(cpu[2]! / cpu[1]!).toFixed(3)}× (${sink} events read)`,
    )
    provider.close()
    await server.close()
  },
  once,
)
