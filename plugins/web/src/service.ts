import { Agent as HttpAgent } from 'node:http'
import { Agent as HttpsAgent } from 'node:https'
import { Context, Service } from 'cordis'
import { ConfigError } from '@cordage/core'
import { Config, inject } from './config.js'
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
  static readonly inject = inject
  static readonly Config = Config

  private readonly providers: WebSearchProvider[] = []

  constructor(
    ctx: Context,
    private readonly config: Config,
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
