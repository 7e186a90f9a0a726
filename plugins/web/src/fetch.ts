import Schema from 'schemastery'
import { defineTool, type Infer, type ToolDefinition, errorMessage } from '@cordage/core'
import type { Converter } from './converter.js'
import { WebError } from './errors.js'
import { fetchRaw, type Transport } from './http.js'

/** The limits `web_fetch` works within (from the plugin config). */
export interface FetchSettings {
  maxBytes: number
  maxRedirects: number
  timeoutMs: number
  userAgent: string
  readability: boolean
}

const Parameters = Schema.object({
  url: Schema.string().pattern(/\S/).required().description('Absolute http:// or https:// URL to fetch.'),
  format: Schema.union(['markdown', 'text', 'html'])
    .default('markdown')
    .description('markdown (default: the main content of HTML pages converted), text (plain text) or html (the page source).'),
  maxBytes: Schema.natural().min(1).description('Stop reading the response after this many bytes (capped by the plugin limit).'),
})

/** The canonical `WebFetchResult`. */
const WebFetchResult = Schema.object({
  url: Schema.string().required(),
  finalUrl: Schema.string().required(),
  status: Schema.natural().required(),
  contentType: Schema.string().required(),
  title: Schema.string(),
  content: Schema.string().required(),
  truncated: Schema.boolean().required(),
})

/** The text the model sees: a header line, the title, the content and a truncation note. */
export function renderFetch(
  value: { url: string; finalUrl: string; status: number; contentType: string; title?: string; content: string; truncated: boolean },
  limit: number,
): string {
  const type = value.contentType.split(';')[0]!.trim() || 'no content type'
  const redirected = value.finalUrl === value.url ? '' : ` (redirected from ${value.url})`
  let text = `Fetched ${value.finalUrl}${redirected} (HTTP ${value.status}, ${type})`
  if (value.title) text += `\nTitle: ${value.title}`
  text += `\n\n${value.content || '(empty body)'}`
  if (value.truncated) text += `\n\n(Truncated: the response was cut after ${limit} bytes. Pass a larger maxBytes or fetch a more specific URL for the rest.)`
  return text
}

/** Maps a transport failure to a coded, model-readable error; the caller's own abort is passed through. */
function failure(error: unknown, url: string, timedOut: boolean, timeoutMs: number): unknown {
  if (error instanceof WebError) return error
  if (timedOut)
    return new WebError(
      'WEB_FETCH_TIMEOUT',
      `fetching ${url} did not finish within ${timeoutMs} ms; the server is slow, the body never ends or the page is slow to convert (try again later, a smaller maxBytes or format "html")`,
      { cause: error },
    )
  const code = (error as NodeJS.ErrnoException)?.code
  const detail = code === 'ENOTFOUND' ? 'the host name does not resolve' : code === 'ECONNREFUSED' ? 'the connection was refused' : errorMessage(error)
  return new WebError('WEB_FETCH_FAILED', `could not fetch ${url}: ${detail}`, { cause: error })
}

/** The `web_fetch` tool: one GET with a byte cap, a deadline, a redirect limit and SSRF checks on every hop. */
export function fetchTool(transport: Transport, converter: Converter, settings: FetchSettings, lifetime: AbortSignal): ToolDefinition {
  return defineTool({
    name: 'web_fetch',
    description: `Fetch an http(s) URL and return its content: HTML as Markdown of the main content (or format "text"/"html"), text, JSON and XML as is. Reads at most ${settings.maxBytes} bytes, follows up to ${settings.maxRedirects} redirects, and refuses private, loopback and link-local addresses. Non-2xx responses are returned with their status. Cite the URL when you use its content.`,
    parameters: Parameters,
    output: {
      schema: WebFetchResult,
      render: (args, value) => [{ type: 'text', text: renderFetch(value, Math.min(args.maxBytes ?? settings.maxBytes, settings.maxBytes)) }],
    },
    concurrency: 'parallel',
    // The body keeps its own deadline; the registry's is a backstop a little later.
    timeoutMs: settings.timeoutMs + 5000,
    async execute(args, exec) {
      const deadline = AbortSignal.timeout(settings.timeoutMs)
      const signal = AbortSignal.any([exec.signal, deadline, lifetime])
      const limits = {
        maxBytes: Math.min(args.maxBytes ?? settings.maxBytes, settings.maxBytes),
        maxRedirects: settings.maxRedirects,
        userAgent: settings.userAgent,
      }
      try {
        const raw = await fetchRaw(args.url.trim(), transport, limits, signal)
        // Conversion runs on a worker thread within what is left of the deadline.
        const options = { format: args.format ?? 'markdown', baseUrl: raw.finalUrl, readability: settings.readability } as const
        const converted = await converter.convert(raw.body, raw.contentType, options, signal)
        // `title` is optional in the schema; schemastery's inferred type cannot say so.
        return { url: raw.url, finalUrl: raw.finalUrl, status: raw.status, contentType: raw.contentType, ...converted, truncated: raw.truncated } as Infer<
          typeof WebFetchResult
        >
      } catch (error) {
        if (exec.signal.aborted || lifetime.aborted) throw exec.signal.reason ?? lifetime.reason
        throw failure(error, args.url, deadline.aborted, settings.timeoutMs)
      }
    },
  })
}
