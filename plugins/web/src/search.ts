import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { WebError } from './errors.js'
import type { WebSearchHit, WebSearchProvider } from '@cordage/services'

/** How `web_search` reaches a provider: the selection `ctx.web` makes per call. */
export interface SearchRouter {
  select(): WebSearchProvider
}

const Parameters = Schema.object({
  query: Schema.string().pattern(/\S/).required().description('What to search the web for.'),
  maxResults: Schema.natural().min(1).max(20).description('Results to return (default from the plugin config, at most 20).'),
})

const Hit = Schema.object({
  title: Schema.string().required(),
  url: Schema.string().required(),
  snippet: Schema.string().required(),
})

/** The canonical `WebSearchResult`. */
const WebSearchResult = Schema.object({
  query: Schema.string().required(),
  results: Schema.array(Hit).required(),
})

/** Numbered Markdown links with their snippets, and a reminder to cite. */
export function renderSearch(value: { query: string; results: WebSearchHit[] }): string {
  if (!value.results.length) return `No results for ${JSON.stringify(value.query)}. Try other words.`
  const lines = value.results.map((hit, index) => {
    const label = hit.title || safeHost(hit.url)
    return `${index + 1}. [${label}](${hit.url})${hit.snippet ? `\n   ${hit.snippet}` : ''}`
  })
  return `Results for ${JSON.stringify(value.query)}:\n\n${lines.join('\n')}\n\nFetch a result with web_fetch for its full text; cite the URLs you use as Markdown links.`
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return url
  }
}

/** The `web_search` tool: one query through the provider `ctx.web` selects. */
export function searchTool(router: SearchRouter, settings: { maxResults: number; timeoutMs: number }, lifetime: AbortSignal): ToolDefinition {
  return defineTool({
    name: 'web_search',
    description: `Search the web for current information. Returns up to ${settings.maxResults} results (title, URL, snippet) by default; follow up with web_fetch to read a page.`,
    parameters: Parameters,
    output: { schema: WebSearchResult, render: (_args, value) => [{ type: 'text', text: renderSearch(value) }] },
    concurrency: 'parallel',
    timeoutMs: settings.timeoutMs + 5000,
    async execute(args, exec) {
      const query = args.query.trim()
      const provider = router.select()
      const deadline = AbortSignal.timeout(settings.timeoutMs)
      const signal = AbortSignal.any([exec.signal, deadline, lifetime])
      try {
        const results = await provider.search(query, { maxResults: args.maxResults ?? settings.maxResults, signal })
        return { query, results }
      } catch (error) {
        if (exec.signal.aborted || lifetime.aborted) throw exec.signal.reason ?? lifetime.reason
        if (deadline.aborted)
          throw new WebError('WEB_SEARCH_FAILED', `${provider.id}: no answer within ${settings.timeoutMs} ms; try again later`, { cause: error })
        throw error instanceof WebError
          ? error
          : new WebError('WEB_SEARCH_FAILED', `${provider.id}: ${(error as Error)?.message ?? String(error)}`, { cause: error })
      }
    },
  })
}
