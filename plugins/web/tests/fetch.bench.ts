// web_fetch end to end on loopback, measured in the same run against a raw http.get and the same fetch
// converted in-thread (what conversion on a worker thread costs), on a 145 KB page of 9 000 elements.
// Then how fast the host answers a tool call while fetches convert.
import { createServer, get, Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterAll, bench, describe } from 'vitest'
import { compare, createTestContext } from '@cordage/testing'
import { AddressPolicy } from '../src/address.js'
import { convertBody } from '../src/convert.js'
import { fetchRaw } from '../src/http.js'
import { Web } from '../src/index.js'
import { ping } from './helpers.js'

const section = (i: number) =>
  `<section><h2>Part ${i}</h2><p>Some <b>text</b> with a <a href="/l${i}">link</a> and more words to read.</p><ul><li>a</li><li>b</li></ul></section>`
const page = `<html><head><title>Big</title></head><body><nav>menu</nav><article>${Array.from({ length: 1000 }, (_, i) => section(i)).join('')}</article></body></html>`
const flood = `<html><body>${'<p>x</p>'.repeat(400_000)}</body></html>`
const server = createServer((request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(request.url === '/flood' ? flood : page))
await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve))
const url = `http://127.0.0.2:${(server.address() as AddressInfo).port}/`
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

async function loaded(config: object) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(Web, { allowAddresses: ['127.0.0.2'], ...config })
  ctx.tools.register(ping)
  const fetch = (format: string, target = url) => ctx.tools.execute({ name: 'web_fetch', arguments: { url: target, format } })
  return { fetch, ping: () => ctx.tools.execute({ name: 'ping', arguments: {} }) }
}
const plain = await loaded({ readability: false })
const reader = await loaded({ readability: true })

// The conversion in the host's thread, right after the fetch: what the worker thread is measured against.
const transport = {
  policy: new AddressPolicy({ blockPrivateAddresses: true, allowAddresses: ['127.0.0.2'] }),
  agents: { http: new HttpAgent(), https: new HttpsAgent() },
}
const limits = { maxBytes: 5_000_000, maxRedirects: 5, userAgent: 'bench' }
async function inThread(readability: boolean, target = url) {
  const raw = await fetchRaw(target, transport, limits, AbortSignal.timeout(60_000))
  return convertBody(raw.body, raw.contentType, { format: 'markdown', baseUrl: raw.finalUrl, readability })
}

function rawGet(): Promise<void> {
  return new Promise((resolve, reject) =>
    get(url, (response) => {
      response.on('data', () => {})
      response.on('end', resolve)
    }).on('error', reject),
  )
}

/** Calls `ping` every 2 ms while `work` runs; the longest wait for an answer and the 99th percentile. */
async function probe(call: () => Promise<unknown>, work: () => Promise<unknown>): Promise<{ max: number; p99: number }> {
  const gaps: number[] = []
  let done = false
  const probing = (async () => {
    let last = performance.now()
    for (;;) {
      await call()
      const now = performance.now()
      gaps.push(now - last)
      last = now
      if (done) break
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  await work().finally(() => (done = true))
  await probing
  gaps.sort((a, b) => a - b)
  return { max: gaps[gaps.length - 1]!, p99: gaps[Math.floor(gaps.length * 0.99)]! }
}

describe('web_fetch', () => {
  bench(
    'conversion on a worker thread vs in-thread',
    async () => {
      for (const [label, tool, readability] of [
        ['whole page', plain, false],
        ['main content', reader, true],
      ] as const) {
        const result = await compare(
          `web_fetch markdown (${label}) of a ${Math.round(page.length / 1000)} KB page: worker thread vs in-thread`,
          { name: 'fetch + in-thread conversion', fn: () => inThread(readability) },
          [
            { name: 'web_fetch, conversion on a worker thread', fn: () => tool.fetch('markdown') },
            { name: 'http.get, body discarded (reference)', fn: rawGet },
          ],
          { iterations: 3, rounds: 7, warmup: 2, unit: 'ms' },
        )
        const worker = result['web_fetch, conversion on a worker thread']!
        const ratio = worker / result['fetch + in-thread conversion']!
        console.log(`  worker thread / in-thread ${ratio.toFixed(2)}× (target ≤ 1.2×)`)
        if (readability) console.log(`  web_fetch markdown with main-content extraction ${(worker / 1000).toFixed(1)} ms (target ≤ 40 ms)`)
      }
      await compare(
        `web_fetch formats of the ${Math.round(page.length / 1000)} KB page`,
        { name: 'http.get, body discarded', fn: rawGet },
        [
          { name: 'web_fetch format=html (fetch + decode)', fn: () => plain.fetch('html') },
          { name: 'web_fetch format=text', fn: () => plain.fetch('text') },
        ],
        { iterations: 3, rounds: 5, warmup: 2, unit: 'ms' },
      )
    },
    { iterations: 1, warmupIterations: 0 },
  )

  bench(
    'a tool call answers while pages convert',
    async () => {
      const rows: Array<[string, { max: number; p99: number }]> = []
      const idle = () => new Promise((resolve) => setTimeout(resolve, 1500))
      rows.push(['nothing running (machine noise)', await probe(reader.ping, idle)])
      const fiveFetches = async () => {
        for (let i = 0; i < 5; i++) await reader.fetch('markdown')
      }
      rows.push(['5 × web_fetch of the 145 KB page', await probe(reader.ping, fiveFetches)])
      rows.push(['5 × web_fetch, two at a time', await probe(reader.ping, () => Promise.all([fiveFetches(), fiveFetches()]))])
      rows.push(['web_fetch of 400 000 <p> (3.2 MB)', await probe(reader.ping, () => reader.fetch('markdown', `${url}flood`))])
      const inThreadFive = async () => {
        for (let i = 0; i < 5; i++) await inThread(true)
      }
      rows.push(['5 × in-thread conversion', await probe(reader.ping, inThreadFive)])
      console.log('\nLongest wait for a ping through ctx.tools.execute while fetches run (target ≤ 50 ms)')
      for (const [name, { max, p99 }] of rows) console.log(`  ${name.padEnd(40)} max ${max.toFixed(1).padStart(7)} ms   p99 ${p99.toFixed(1).padStart(6)} ms`)
    },
    { iterations: 1, warmupIterations: 0 },
  )
})
