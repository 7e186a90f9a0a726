import type { WebSearchHit, WebSearchProvider } from '@cordage/services'
import { WebError } from './errors.js'
import { errorMessage } from '@cordage/core'

const MAX_RESPONSE_BYTES = 4_000_000
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" }

/** Providers return snippets with highlight markup (`<strong>`) and entities; the model gets plain text. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (match, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match
      }
      return ENTITIES[name.toLowerCase()] ?? match
    })
    .replace(/\s+/g, ' ')
    .trim()
}

/** GETs a provider's JSON, refusing redirects and bodies over the cap. */
async function getJson(provider: string, url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<any> {
  let response: Response
  try {
    response = await fetch(url, { headers: { accept: 'application/json', ...headers }, redirect: 'error', signal })
  } catch (error) {
    if (signal.aborted) throw signal.reason
    throw new WebError(
      'WEB_SEARCH_FAILED',
      `${provider}: the search request failed: ${(error as Error).cause ? String((error as any).cause?.message ?? (error as any).cause) : errorMessage(error)}`,
      { cause: error },
    )
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = response.body?.getReader()
  for (;;) {
    if (!reader) break
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel()
      throw new WebError('WEB_SEARCH_FAILED', `${provider}: the response is larger than ${MAX_RESPONSE_BYTES} bytes`)
    }
    chunks.push(value)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (!response.ok) {
    const hint = response.status === 401 || response.status === 403 ? ' (check the API key)' : response.status === 429 ? ' (rate limited; try again later)' : ''
    throw new WebError('WEB_SEARCH_FAILED', `${provider}: HTTP ${response.status}${hint}: ${plainText(text).slice(0, 300)}`)
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new WebError(
      'WEB_SEARCH_FAILED',
      `${provider}: the response is not JSON (is the instance's JSON output format enabled?): ${plainText(text).slice(0, 200)}`,
    )
  }
}

/** The normalised form of an http(s) URL (whitespace gone, as the URL parser drops or encodes it), or undefined. */
function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return undefined
  try {
    return new URL(value).href
  } catch {
    return undefined
  }
}

/** Keeps well-formed http(s) hits, at most `max`, deduplicated by URL. */
function normalise(items: unknown, pick: (item: any) => Partial<WebSearchHit>, max: number): WebSearchHit[] {
  const hits: WebSearchHit[] = []
  const seen = new Set<string>()
  for (const item of Array.isArray(items) ? items : []) {
    if (hits.length >= max) break
    const hit = pick(item ?? {})
    const url = httpUrl(hit.url)
    if (url === undefined || seen.has(url)) continue
    seen.add(url)
    hits.push({
      url,
      title: plainText(typeof hit.title === 'string' ? hit.title : ''),
      snippet: plainText(typeof hit.snippet === 'string' ? hit.snippet : ''),
    })
  }
  return hits
}

/** A SearXNG instance (`/search?format=json`; the instance must enable the json output format). */
export function searxngProvider(baseUrl: string): WebSearchProvider {
  return {
    id: 'searxng',
    async search(query, { maxResults, signal }) {
      const url = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`)
      url.searchParams.set('q', query)
      url.searchParams.set('format', 'json')
      const body = await getJson('searxng', url, {}, signal)
      return normalise(body?.results, (item) => ({ title: item.title, url: item.url, snippet: item.content }), maxResults)
    },
  }
}

/** The Brave Search API (`GET /web/search`, key in the `X-Subscription-Token` header, read from the environment per call). */
export function braveProvider(options: { baseUrl: string; apiKeyEnv: string }): WebSearchProvider {
  return {
    id: 'brave',
    unavailable: () => (process.env[options.apiKeyEnv] ? undefined : `brave: set the ${options.apiKeyEnv} environment variable to a Brave Search API key`),
    async search(query, { maxResults, signal }) {
      const url = new URL('web/search', options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`)
      url.searchParams.set('q', query)
      // Brave's documented maximum page size.
      url.searchParams.set('count', String(Math.min(maxResults, 20)))
      const body = await getJson('brave', url, { 'x-subscription-token': process.env[options.apiKeyEnv] ?? '' }, signal)
      return normalise(body?.web?.results, (item) => ({ title: item.title, url: item.url, snippet: item.description }), maxResults)
    },
  }
}
