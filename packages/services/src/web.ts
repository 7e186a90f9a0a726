/** One web search hit as every provider normalises it (plain text, no markup). */
export interface WebSearchHit {
  title: string
  url: string
  snippet: string
}

/** A search backend the `web` service can route `web_search` to. */
export interface WebSearchProvider {
  /** Short stable id (`searxng`, `brave`), named by the web plugin's `searchProvider` config. */
  readonly id: string
  /** Why the provider cannot search right now (e.g. an unset API key), or undefined when it can. */
  unavailable?(): string | undefined
  /** Runs one query; must observe `signal` and return at most `maxResults` hits. */
  search(query: string, options: { maxResults: number; signal: AbortSignal }): Promise<WebSearchHit[]>
}

/** The `web` service (`ctx.web`): the search providers web_search chooses from. */
export interface WebService {
  /** Adds a provider as an effect of the caller: unloading the caller removes it. Throws on a duplicate id. */
  register(provider: WebSearchProvider): () => void
  /** The provider a search would use now; throws a `WEB_SEARCH_UNAVAILABLE` error naming what to configure. */
  select(): WebSearchProvider
}
