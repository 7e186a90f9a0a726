import type { IncomingMessage } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import type { WebSearchProvider } from '@cordage/services'
import { codeOf, loadWeb, serve, textOf, valueOf } from './helpers.js'

// The shape of SearXNG's /search?format=json answer (fields beyond these are ignored).
const searxngBody = {
  query: 'cordis plugin',
  number_of_results: 3,
  results: [
    { url: 'https://cordis.io/guide', title: 'Cordis <b>guide</b>', content: 'Plugins &amp; services', engine: 'duckduckgo', score: 2 },
    { url: 'javascript:alert(1)', title: 'bad', content: 'not http' },
    { url: 'https://cordis.io/guide', title: 'duplicate', content: '' },
    { url: 'https://github.com/cordiverse/cordis', title: '', content: '' },
  ],
  answers: [],
  suggestions: [],
  infoboxes: [],
}

// The shape of Brave's GET /res/v1/web/search answer.
const braveBody = {
  type: 'search',
  query: { original: 'cordis' },
  web: {
    type: 'search',
    results: [
      { title: 'Cordis', url: 'https://cordis.io/', description: 'Meta <strong>framework</strong> for plugins', age: '2 days ago' },
      { title: 'Koishi', url: 'https://koishi.chat/', description: 'Bots' },
    ],
  },
}

const savedKey = process.env.TEST_BRAVE_KEY
afterEach(() => {
  if (savedKey === undefined) delete process.env.TEST_BRAVE_KEY
  else process.env.TEST_BRAVE_KEY = savedKey
})

describe('web_search', () => {
  it('is not registered unless a provider is configured or search is enabled', async () => {
    const { ctx } = await loadWeb()
    expect(ctx.tools.get('web_fetch')).toBeDefined()
    expect(ctx.tools.get('web_search')).toBeUndefined()
  })

  it('fails with WEB_SEARCH_UNAVAILABLE when enabled with no provider', async () => {
    const { call } = await loadWeb({ search: true })
    const result = await call('web_search', { query: 'x' })
    expect(codeOf(result)).toBe('WEB_SEARCH_UNAVAILABLE')
    expect(textOf(result)).toContain('no search provider is configured')
  })

  it('queries a SearXNG instance and normalises its results', async () => {
    const seen: IncomingMessage[] = []
    const server = await serve((request, response) => {
      seen.push(request)
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(searxngBody))
    })
    const { call } = await loadWeb({ searxng: `${server.url}/searx` })
    const result = await call('web_search', { query: ' cordis plugin ', maxResults: 5 })
    expect(valueOf(result)).toEqual({
      query: 'cordis plugin',
      results: [
        { title: 'Cordis guide', url: 'https://cordis.io/guide', snippet: 'Plugins & services' },
        { title: '', url: 'https://github.com/cordiverse/cordis', snippet: '' },
      ],
    })
    const url = new URL(seen[0]!.url!, server.url)
    expect(url.pathname).toBe('/searx/search')
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: 'cordis plugin', format: 'json' })
    expect(textOf(result)).toMatchInlineSnapshot(`
      "Results for "cordis plugin":

      1. [Cordis guide](https://cordis.io/guide)
         Plugins & services
      2. [github.com](https://github.com/cordiverse/cordis)

      Fetch a result with web_fetch for its full text; cite the URLs you use as Markdown links."
    `)
  })

  it('queries the Brave API with the key from the environment', async () => {
    const seen: IncomingMessage[] = []
    const server = await serve((request, response) => {
      seen.push(request)
      if (request.headers['x-subscription-token'] !== 'secret-key') return response.writeHead(401).end('{"error":"bad token"}')
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(braveBody))
    })
    process.env.TEST_BRAVE_KEY = 'secret-key'
    const { call } = await loadWeb({ brave: { baseUrl: `${server.url}/res/v1`, apiKeyEnv: 'TEST_BRAVE_KEY' } })
    const value = valueOf(await call('web_search', { query: 'cordis', maxResults: 1 }))
    expect(value.results).toEqual([{ title: 'Cordis', url: 'https://cordis.io/', snippet: 'Meta framework for plugins' }])
    const url = new URL(seen[0]!.url!, server.url)
    expect(url.pathname).toBe('/res/v1/web/search')
    expect(url.searchParams.get('q')).toBe('cordis')
    expect(url.searchParams.get('count')).toBe('1')
    process.env.TEST_BRAVE_KEY = 'wrong'
    const denied = await call('web_search', { query: 'cordis' })
    expect(codeOf(denied)).toBe('WEB_SEARCH_FAILED')
    expect(textOf(denied)).toContain('brave: HTTP 401 (check the API key)')
  })

  it('says which variable to set when the Brave key is missing', async () => {
    delete process.env.TEST_BRAVE_KEY
    const { call } = await loadWeb({ brave: { baseUrl: 'http://127.0.0.2:9/', apiKeyEnv: 'TEST_BRAVE_KEY' } })
    const result = await call('web_search', { query: 'x' })
    expect(codeOf(result)).toBe('WEB_SEARCH_UNAVAILABLE')
    expect(textOf(result)).toContain('set the TEST_BRAVE_KEY environment variable')
  })

  it('reports provider failures, non-JSON answers and slow providers as WEB_SEARCH_FAILED', async () => {
    const server = await serve((request, response) => {
      if (request.url!.startsWith('/down')) response.writeHead(503).end('maintenance')
      else if (request.url!.startsWith('/html')) response.writeHead(200, { 'content-type': 'text/html' }).end('<html>format disabled</html>')
      else if (request.url!.startsWith('/redirect')) response.writeHead(302, { location: 'http://169.254.169.254/' }).end()
      // /slow never answers.
    })
    for (const [path, message] of [
      ['down', 'HTTP 503'],
      ['html', 'not JSON'],
      ['redirect', 'failed'],
      ['slow', 'no answer within 300 ms'],
    ]) {
      const { call } = await loadWeb({ searxng: `${server.url}/${path}`, timeoutMs: 300 })
      const result = await call('web_search', { query: 'q' })
      expect(codeOf(result), path).toBe('WEB_SEARCH_FAILED')
      expect(textOf(result), path).toContain(message)
    }
  })

  it('routes to providers other plugins register on ctx.web, and forgets them when they unload', async () => {
    const { ctx, call } = await loadWeb({ search: true, searchProvider: 'fake' })
    const provider: WebSearchProvider = { id: 'fake', search: async (query) => [{ title: query, url: 'https://example.com/', snippet: 's' }] }
    const fiber = await ctx.plugin({ name: 'fake-search', inject: ['web'], apply: (inner) => void inner.web.register(provider) })
    expect(valueOf(await call('web_search', { query: 'hello' })).results[0].title).toBe('hello')
    await fiber.dispose()
    const result = await call('web_search', { query: 'hello' })
    expect(codeOf(result)).toBe('WEB_SEARCH_UNAVAILABLE')
    expect(textOf(result)).toContain('web search provider "fake" is not registered')
  })

  it('rejects a provider URL that is not http(s) at load', async () => {
    await expect(loadWeb({ searxng: 'localhost:8888' }, { print: false })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: 'web: searxng: must be an http(s) URL, got "localhost:8888"',
    })
  })

  it('rejects a blank query and an out-of-range maxResults as invalid arguments', async () => {
    const { call } = await loadWeb({ search: true })
    expect(codeOf(await call('web_search', { query: ' ' }))).toBe('INVALID_ARGS')
    expect(codeOf(await call('web_search', { query: 'x', maxResults: 50 }))).toBe('INVALID_ARGS')
  })

  it('renders an empty result set', async () => {
    const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}'))
    const { call } = await loadWeb({ searxng: server.url })
    expect(textOf(await call('web_search', { query: 'zzz' }))).toBe('No results for "zzz". Try other words.')
  })
})
