import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { bench } from 'vitest'
import { JsonlSessionStore } from '@cordage/agent'
import { PostgresSessionStore } from '@cordage/plugin-store-postgres'
import type { SessionStore, StoredEvent } from '@cordage/services'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { startServer } from '../src/server.js'
import { echoTool, sseReader } from './harness.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Event from the agent loop to an SSE client on loopback (target: p99 ≤ 5 ms). The clock starts when the
// session log hands the event to the store (a line written to the JSONL file; a turn's batch sent to
// PostgreSQL) and stops when the client has parsed its `stored` message. The baseline is the bare
// transport: a plain node:http SSE response written and read in the same process, paced alike.
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const TURNS = 300
const PACE_MS = 3

function percentile(values: number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]
}

function report(name: string, latencies: number[]): string {
  return `  ${name.padEnd(40)} n=${String(latencies.length).padStart(4)}  p50 ${percentile(latencies, 0.5).toFixed(2)} ms  p99 ${percentile(latencies, 0.99).toFixed(2)} ms  max ${Math.max(...latencies).toFixed(2)} ms`
}

/** The bare transport: node:http writes an SSE message every PACE_MS; the client parses it. */
async function baseline(count: number): Promise<number[]> {
  let response: ServerResponse | undefined
  const server = createServer((_request, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.flushHeaders()
    response = res
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const reader = sseReader(await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`))
  const sent: number[] = []
  const latencies: number[] = []
  const reading = (async () => {
    for (let index = 0; index < count; index++) {
      const message = await reader.next()
      latencies.push(performance.now() - sent[Number(message!.id)])
    }
  })()
  for (let index = 0; index < count; index++) {
    sent[index] = performance.now()
    const event = { type: 'tool/result', seq: index + 1, time: new Date().toISOString(), data: { callId: `c${index}`, content: [{ type: 'text', text: 'y' }] } }
    response!.write(`event: stored\ndata: ${JSON.stringify(event)}\nid: ${index}\n\n`)
    await new Promise((resolve) => setTimeout(resolve, PACE_MS))
  }
  await reading
  response!.end()
  server.closeAllConnections()
  server.close()
  return latencies
}

/** A run of TURNS turns (text, one tool call each) through `cordage serve`'s API, followed by one SSE client. */
async function throughServer(store: SessionStore, handedOver: Map<number, number>): Promise<number[]> {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin({ name: 'timed-store', apply: (inner: typeof ctx) => inner.provide('sessions', store) })
  const turns = Array.from({ length: TURNS }, () => ({ text: 'x', toolCalls: [{ name: 'echo', arguments: { text: 'y' } }], delayMs: PACE_MS }))
  await ctx.plugin(ScriptedModel, { turns: [...turns, { text: 'done' }], record: false })
  ctx.tools.register(echoTool)
  const server = await startServer({ ctx })
  const response = await fetch(`${server.url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'go', options: { maxTurns: TURNS + 1 } }) })
  const { id } = (await response.json()) as { id: string }
  const reader = sseReader(await fetch(`${server.url}/api/sessions/${id}/events`))
  const latencies: number[] = []
  for (;;) {
    const message = await reader.next()
    if (!message || message.event === 'end') break
    if (message.event !== 'stored') continue
    const arrived = performance.now()
    const event = JSON.parse(message.data) as StoredEvent
    const start = handedOver.get(event.seq)
    // The first events were written before the client connected: they measure the catch-up, not the live path.
    if (start !== undefined && event.seq > 4) latencies.push(arrived - start)
  }
  await server.close()
  return latencies
}

bench(
  'event from the agent loop to an SSE client',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-bench-'))
    const jsonlTimes = new Map<number, number>()
    let line = 0
    // The JSONL session log calls `notify` after each event line it writes: that is the hand-over.
    const jsonl = new (class extends JsonlSessionStore {
      override notify(id: string): void {
        jsonlTimes.set(++line, performance.now())
        super.notify(id)
      }
    })({ cwd: dir })
    const lines = [`\nevent → SSE client, ${TURNS} turns paced ${PACE_MS} ms (target p99 ≤ 5 ms)`]
    lines.push(report('bare node:http SSE (baseline)', await baseline(TURNS * 2)))
    lines.push(report('cordage serve, JSONL store', await throughServer(jsonl, jsonlTimes)))
    const url = process.env.CORDAGE_TEST_POSTGRES_URL
    if (url) {
      const postgresTimes = new Map<number, number>()
      // PostgreSQL gets a turn's events in one append at the turn's end: the hand-over is that call.
      const postgres = new (class extends PostgresSessionStore {
        override async append(id: string, events: readonly StoredEvent[]): Promise<void> {
          const now = performance.now()
          for (const event of events) postgresTimes.set(event.seq, now)
          return super.append(id, events)
        }
      })({ url, pollMs: 250 })
      await postgres.open()
      lines.push(report('cordage serve, PostgreSQL store', await throughServer(postgres, postgresTimes)))
      await postgres.close()
    } else lines.push('  (PostgreSQL skipped: set CORDAGE_TEST_POSTGRES_URL)')
    console.log(lines.join('\n'))
    rmSync(dir, { recursive: true, force: true })
  },
  once,
)
