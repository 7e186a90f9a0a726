import { startFakeOpenAI } from '@cordage/testing'
import { OpenAIClient, resolveOptions } from './src/index.js'
import { SseParser } from './src/sse.js'
import { ChunkAssembler } from './src/assemble.js'
const toolTurn = { text: 'I will look up the three keys you asked about, then summarise what I find.', toolCalls: ['alpha','bravo','charlie'].map((key, i) => ({ id: `call_${i}`, name: 'lookup', arguments: { key, note: 'x'.repeat(40) } })) }
const server = await startFakeOpenAI([toolTurn], { loop: true })
const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
const url = `${server.baseURL}/chat/completions`
const headers = { 'content-type': 'application/json' }
const client = new OpenAIClient(resolveOptions({ baseURL: server.baseURL, apiKey: 'k', model: 'm', maxRetries: 0, timeoutMs: 10000, backoffMs: 1, maxRetryDelayMs: 10, stream: true, includeUsage: true, images: 'omit', headers: {}, extraBody: {} } as any, {}))
const variants: Record<string, () => Promise<void>> = {
  text: async () => { await (await fetch(url, { method: 'POST', body, headers })).text() },
  reader: async () => { const r = (await fetch(url, { method: 'POST', body, headers })).body!.getReader(); while (!(await r.read()).done); },
  parse: async () => { const r = (await fetch(url, { method: 'POST', body, headers })).body!.getReader(); const d = new TextDecoder(); const p = new SseParser(); const a = new ChunkAssembler(); for (;;) { const c = await r.read(); if (c.done) break; for (const e of p.push(d.decode(c.value, { stream: true }))) if (e.data !== '[DONE]') a.push(JSON.parse(e.data)) } a.finish() },
  provider: async () => { for await (const _ of client.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] })); },
}
const cpu: Record<string, number[]> = {}
for (let round = 0; round < 12; round++) for (const [name, fn] of Object.entries(variants)) {
  const s = process.cpuUsage(); for (let i = 0; i < 30; i++) await fn(); const u = process.cpuUsage(s); (cpu[name] ??= []).push((u.user + u.system) / 30 / 1000)
}
for (const [name, values] of Object.entries(cpu)) console.log(name.padEnd(10), values.sort((a, b) => a - b)[6]!.toFixed(3), 'ms cpu')
await server.close()
