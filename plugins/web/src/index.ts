import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import { ConfigError, strictConfig } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { WebSearchProvider, WebService } from '@cordage/services'
import { AddressPolicy } from './address.js'
import { Converter } from './converter.js'
import { WebError } from './errors.js'
import { fetchTool } from './fetch.js'
import { braveProvider, searxngProvider } from './providers.js'
import { searchTool } from './search.js'

/** The `web` service: web_fetch, and web_search routed to the registered search providers. */
export class Web extends Service implements WebService {
  static readonly inject = ['tools']
  static readonly Config: Schema<Partial<Web.Config>, Web.Config> = strictConfig(
    'web',
    Schema.object({
      maxBytes: Schema.natural()
        .min(1024)
        .default(5_000_000)
        .description('Bytes of a response body web_fetch reads at most (also the ceiling of its maxBytes argument).'),
      maxRedirects: Schema.natural().default(5).description('Redirects web_fetch follows, each checked like the first request.'),
      timeoutMs: Schema.natural().min(1).default(30_000).description('Deadline of one fetch (all hops and the body) or one search.'),
      userAgent: Schema.string().default('Cordage/0.1 (web_fetch; +https://github.com/cordage)').description('User-Agent header of web_fetch.'),
      convertTimeoutMs: Schema.natural()
        .min(1)
        .default(10_000)
        .description('Time converting one page may take (within timeoutMs); past it the conversion is stopped (WEB_CONVERSION_LIMIT).'),
      convertMemoryMb: Schema.natural()
        .min(32)
        .default(256)
        .description('Heap of a conversion thread in MB; a page that needs more is stopped (WEB_CONVERSION_LIMIT).'),
      readability: Schema.boolean()
        .default(true)
        .description("Convert only the main content of HTML pages (found after Mozilla Readability's method), falling back to the whole body."),
      blockPrivateAddresses: Schema.boolean()
        .default(true)
        .description('SSRF protection: refuse loopback, private, link-local and metadata addresses after DNS resolution and on every redirect.'),
      allowAddresses: Schema.array(Schema.string())
        .default([])
        .description('IP addresses or CIDR ranges web_fetch may reach despite blockPrivateAddresses (e.g. "10.1.2.0/24").'),
      searxng: Schema.string().description('Base URL of a SearXNG instance with the JSON format enabled (e.g. http://localhost:8888).'),
      // A union with undefined: a bare object schema would fill in its defaults and enable Brave for everyone.
      brave: Schema.union([
        Schema.object({
          baseUrl: Schema.string().default('https://api.search.brave.com/res/v1').description('Brave Search API base URL.'),
          apiKeyEnv: Schema.string().default('BRAVE_API_KEY').description('Environment variable holding the API key.'),
        }),
        Schema.const(undefined),
      ]).description('Enable the Brave Search API provider ({} for the defaults).'),
      searchProvider: Schema.string().description('Provider id web_search uses when several are registered (default: the first available).'),
      search: Schema.boolean().description('Register web_search (default: only when searxng or brave is configured).'),
      maxResults: Schema.natural().min(1).max(20).default(8).description('Default number of web_search results.'),
    }),
  )

  private readonly providers: WebSearchProvider[] = []

  constructor(
    ctx: Context,
    private readonly config: Web.Config,
  ) {
    super(ctx, 'web')
    const policy = new AddressPolicy(config)
    for (const [key, value] of [
      ['searxng', config.searxng],
      ['brave.baseUrl', config.brave?.baseUrl],
    ] as const) {
      if (value !== undefined && !/^https?:\/\/[^/]/i.test(value))
        throw new ConfigError('web', [{ path: key, message: `must be an http(s) URL, got ${JSON.stringify(value)}` }])
    }
    const agents = { http: new HttpAgent(), https: new HttpsAgent() }
    const lifetime = new AbortController()
    const converter = new Converter({ timeoutMs: config.convertTimeoutMs, memoryMb: config.convertMemoryMb })
    ctx.effect(
      () => () => {
        lifetime.abort(new WebError('WEB_FETCH_FAILED', 'the web plugin was unloaded'))
        agents.http.destroy()
        agents.https.destroy()
        return converter.close()
      },
      'web agents and conversion threads',
    )
    const tools: ToolRegistry = ctx.tools
    tools.register(fetchTool({ policy, agents }, converter, config, lifetime.signal))
    if (config.searxng) this.register(searxngProvider(config.searxng))
    if (config.brave) this.register(braveProvider(config.brave))
    if (config.search ?? this.providers.length > 0) tools.register(searchTool(this, config, lifetime.signal))
  }

  /** Adds a search provider as an effect of the caller: unloading the caller removes it. */
  register(provider: WebSearchProvider): () => void {
    return this.ctx.effect(
      () => {
        if (this.providers.some((entry) => entry.id === provider.id)) throw new Error(`web: a search provider with id "${provider.id}" is already registered`)
        this.providers.push(provider)
        return () => void this.providers.splice(this.providers.indexOf(provider), 1)
      },
      `web.register(${JSON.stringify(provider.id)})`,
    )
  }

  /** The provider a search uses now; throws WEB_SEARCH_UNAVAILABLE naming what to configure. */
  select(): WebSearchProvider {
    const wanted = this.config.searchProvider
    const candidates = wanted ? this.providers.filter((provider) => provider.id === wanted) : this.providers
    if (wanted && !candidates.length) {
      throw new WebError(
        'WEB_SEARCH_UNAVAILABLE',
        `web search provider "${wanted}" is not registered (registered: ${this.providers.map((provider) => provider.id).join(', ') || 'none'}); web_search cannot run until it is configured`,
      )
    }
    const reasons: string[] = []
    for (const provider of candidates) {
      const reason = provider.unavailable?.()
      if (!reason) return provider
      reasons.push(reason)
    }
    const why = reasons.length ? reasons.join('; ') : "no search provider is configured (set the web plugin's searxng URL or brave options)"
    throw new WebError('WEB_SEARCH_UNAVAILABLE', `web search is unavailable: ${why}. Answer from what you know or fetch a known URL with web_fetch instead.`)
  }
}

export declare namespace Web {
  interface Config {
    maxBytes: number
    maxRedirects: number
    timeoutMs: number
    convertTimeoutMs: number
    convertMemoryMb: number
    userAgent: string
    readability: boolean
    blockPrivateAddresses: boolean
    allowAddresses: string[]
    searxng?: string
    brave?: { baseUrl: string; apiKeyEnv: string }
    searchProvider?: string
    search?: boolean
    maxResults: number
  }
}

export default Web
export { braveProvider, searxngProvider } from './providers.js'
export { WebError, type WebErrorCode } from './errors.js'
