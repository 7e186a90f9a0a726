import Schema from 'schemastery'
import { defineTool, ToolArgsError, type Infer, type ToolDefinition, errorMessage } from '@cordage/core'
import { WebError } from './errors.js'
import type { WebSearchHit, WebSearchProvider } from '@cordage/services'

/** How `web_search` reaches a provider: the selection `ctx.web` makes per call. */
export interface SearchRouter {
  select(): WebSearchProvider
}

/** Queries one call may run, in parallel (as the seed system's web_search). */
export const MAX_QUERIES = 4

const Query = Schema.string().pattern(/\S/)
const Parameters = Schema.object({
  queries: Schema.array(Query)
    .min(1)
    .max(MAX_QUERIES)
    .description(`1–${MAX_QUERIES} search queries, searched in parallel; use a one-item array for a single search.`),
  query: Query.description('Deprecated: one query, the same as queries: [query].'),
  maxResults: Schema.natural().min(1).max(20).description('Results per query (default from the plugin config, at most 20).'),
})

const Hit = Schema.object({
  title: Schema.string().required(),
  url: Schema.string().required(),
  snippet: Schema.string().required(),
})

/** One query's results, or why that query failed while others answered. */
const Search = Schema.object({
  query: Schema.string().required(),
  results: Schema.array(Hit).required(),
  error: Schema.object({ code: Schema.string().required(), message: Schema.string().required() }),
})

/** The canonical `WebSearchResult`: the searches in the order the queries were given. */
const WebSearchResult = Schema.object({
  searches: Schema.array(Search).required(),
})

/** One search as the value holds it. */
export interface SearchGroup {
  query: string
  results: WebSearchHit[]
  error?: { code: string; message: string }
}

/** Each search's numbered Markdown links with their snippets, then one reminder to cite. */
export function renderSearch(value: { searches: SearchGroup[] }): string {
  const [only] = value.searches
  if (value.searches.length === 1 && only && !only.error && !only.results.length) return `No results for ${JSON.stringify(only.query)}. Try other words.`
  const groups = value.searches.map((search) => {
    const query = JSON.stringify(search.query)
    if (search.error) return `Search for ${query} failed: ${search.error.message}`
    if (!search.results.length) return `No results for ${query}.`
    // Results come from the web: each field is kept to its own line and its own link, so none can pose as
    // another result or as text outside the results.
    const lines = search.results.map((hit, index) => {
      const label = oneLine(hit.title || safeHost(hit.url)).replace(/[\\[\]]/g, '\\$&')
      const snippet = oneLine(hit.snippet)
      return `${index + 1}. [${label}](${linkTarget(hit.url)})${snippet ? `\n   ${snippet}` : ''}`
    })
    return `Results for ${query}:\n\n${lines.join('\n')}`
  })
  return `${groups.join('\n\n')}\n\nFetch a result with web_fetch for its full text; cite the URLs you use as Markdown links.`
}

/** A URL as a link target: whitespace, parentheses and angle brackets percent-encoded, so the link ends where it should. */
function linkTarget(url: string): string {
  return url.replace(/[\s()<>]/g, (character) => Buffer.from(character).toString('hex').toUpperCase().replace(/../g, '%$&'))
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return url
  }
}

/** The queries of a call: `queries` after the deprecated `query`, trimmed, first occurrences only. */
function queriesOf(args: { queries?: string[]; query?: string }): string[] {
  const all = [...(args.query === undefined ? [] : [args.query]), ...(args.queries ?? [])].map((query) => query.trim())
  const unique = [...new Set(all)]
  if (!unique.length) throw new ToolArgsError('web_search needs queries: pass queries: ["…"] (1–4 searches)', [{ path: '/queries', message: 'is required' }])
  if (unique.length > MAX_QUERIES)
    throw new ToolArgsError(`web_search runs at most ${MAX_QUERIES} queries per call; got ${unique.length}`, [
      { path: '/queries', message: `must have at most ${MAX_QUERIES} items` },
    ])
  return unique
}

/** Maps a provider failure to a coded error; the caller's own abort is passed through. */
function searchFailure(error: unknown, provider: WebSearchProvider, timedOut: boolean, timeoutMs: number): WebError {
  if (timedOut) return new WebError('WEB_SEARCH_FAILED', `${provider.id}: no answer within ${timeoutMs} ms; try again later`, { cause: error })
  return error instanceof WebError ? error : new WebError('WEB_SEARCH_FAILED', `${provider.id}: ${errorMessage(error)}`, { cause: error })
}

/** The `web_search` tool: 1–4 queries, in parallel, through the provider `ctx.web` selects. */
export function searchTool(router: SearchRouter, settings: { maxResults: number; timeoutMs: number }, lifetime: AbortSignal): ToolDefinition {
  return defineTool({
    name: 'web_search',
    description: `Search the web for current information. Provide 1–${MAX_QUERIES} queries in the queries array (searched in parallel); each returns up to ${settings.maxResults} results (title, URL, snippet) by default, grouped per query. Follow up with web_fetch to read a page, and cite the URLs you use.`,
    parameters: Parameters,
    output: { schema: WebSearchResult, render: (_args, value) => [{ type: 'text', text: renderSearch(value as { searches: SearchGroup[] }) }] },
    concurrency: 'parallel',
    timeoutMs: settings.timeoutMs + 5000,
    async execute(args, exec) {
      const queries = queriesOf(args)
      const provider = router.select()
      const deadline = AbortSignal.timeout(settings.timeoutMs)
      const signal = AbortSignal.any([exec.signal, deadline, lifetime])
      const maxResults = args.maxResults ?? settings.maxResults
      const outcomes = await Promise.allSettled(queries.map((query) => provider.search(query, { maxResults, signal })))
      if (exec.signal.aborted || lifetime.aborted) throw exec.signal.reason ?? lifetime.reason
      const failures = outcomes.map((outcome) =>
        outcome.status === 'rejected' ? searchFailure(outcome.reason, provider, deadline.aborted, settings.timeoutMs) : undefined,
      )
      // Every query failed: the call fails, as one failed query always did.
      if (failures.every(Boolean)) throw failures[0]
      const searches: SearchGroup[] = queries.map((query, index) => {
        const outcome = outcomes[index]!
        const failure = failures[index]
        if (failure) return { query, results: [], error: { code: failure.code, message: failure.message } }
        return { query, results: (outcome as PromiseFulfilledResult<WebSearchHit[]>).value }
      })
      // `error` is optional in the schema; schemastery's inferred type cannot say so.
      return { searches } as Infer<typeof WebSearchResult>
    },
  })
}
