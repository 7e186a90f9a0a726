import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'

/** Plugin name. */
export const name = 'web'
/** Registers its tools in the registry. Provides `web` (`WebService`, declared in `@cordage/services`). */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
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

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
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
