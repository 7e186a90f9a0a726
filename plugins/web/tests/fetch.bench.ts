// web_fetch end to end on loopback against the raw HTTP GET it wraps, measured in the same run: what the
// address checks, decoding and HTML → Markdown conversion (with and without Readability) cost on a 145 KB page of 9 000 elements.
import { createServer, get } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, bench, describe } from 'vitest'
import { compare, createTestContext } from '@cordage/testing'
import { Web } from '../src/index.js'

const section = (i: number) =>
  `<section><h2>Part ${i}</h2><p>Some <b>text</b> with a <a href="/l${i}">link</a> and more words to read.</p><ul><li>a</li><li>b</li></ul></section>`
const page = `<html><head><title>Big</title></head><body><nav>menu</nav><article>${Array.from({ length: 1000 }, (_, i) => section(i)).join('')}</article></body></html>`
const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(page))
await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve))
const url = `http://127.0.0.2:${(server.address() as AddressInfo).port}/`
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

async function loaded(config: object) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(Web, { allowAddresses: ['127.0.0.2'], ...config })
  return (format: string) => ctx.tools.execute({ name: 'web_fetch', arguments: { url, format } })
}
const plain = await loaded({ readability: false })
const reader = await loaded({ readability: true })

function rawGet(): Promise<void> {
  return new Promise((resolve, reject) =>
    get(url, (response) => {
      response.on('data', () => {})
      response.on('end', resolve)
    }).on('error', reject),
  )
}

describe('web_fetch', () => {
  bench(
    'compare',
    async () => {
      await compare(
        `web_fetch of a ${Math.round(page.length / 1000)} KB page vs a raw http.get`,
        { name: 'http.get, body discarded', fn: rawGet },
        [
          { name: 'web_fetch format=html (fetch + decode)', fn: () => plain('html') },
          { name: 'web_fetch format=text (linkedom)', fn: () => plain('text') },
          { name: 'web_fetch markdown (linkedom + turndown)', fn: () => plain('markdown') },
          { name: 'web_fetch markdown (+ Readability)', fn: () => reader('markdown') },
        ],
        { iterations: 3, rounds: 5, warmup: 2, unit: 'ms' },
      )
    },
    { iterations: 1, warmupIterations: 0 },
  )
})
