import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll } from 'vitest'
import { testToolContract } from '@cordage/testing'
import { Web } from '../src/index.js'

// One server for the whole suite (started before the cases are built, so they can name its port).
const server = createServer((request, response) => {
  if (request.url === '/huge') return response.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(3_000_000))
  if (request.url === '/json') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
  if (request.url === '/png') return response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(64))
  if (request.url!.startsWith('/search')) {
    return response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ results: [{ url: 'https://a.example/', title: 'A', content: 'a' }] }))
  }
  response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>T</title></head><body><h1>Hi</h1><p>there</p></body></html>')
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve))
const base = `http://127.0.0.2:${(server.address() as AddressInfo).port}`
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

testToolContract(Web, {
  config: { allowAddresses: ['127.0.0.2'], searxng: base, maxBytes: 80_000 },
  cases: [
    { tool: 'web_fetch', arguments: { url: `${base}/page` } },
    { tool: 'web_fetch', arguments: { url: `${base}/page`, format: 'html' } },
    { tool: 'web_fetch', arguments: { url: `${base}/json` } },
    { name: 'web_fetch of a huge body stays within the content bound', tool: 'web_fetch', arguments: { url: `${base}/huge` } },
    { tool: 'web_fetch', arguments: { url: `${base}/png` }, expect: 'error' },
    { tool: 'web_fetch', arguments: { url: 'http://127.0.0.1/' }, expect: 'error' },
    { tool: 'web_fetch', arguments: { url: 'gopher://x/' }, expect: 'error' },
    { tool: 'web_search', arguments: { query: 'anything' } },
    { tool: 'web_search', arguments: { queries: ['one', 'two'] } },
    { tool: 'web_search', arguments: { query: '' }, expect: 'error' },
  ],
})
