import { fileURLToPath } from 'node:url'
import type { DiagnosticValue, LocationValue, RangeValue, SymbolValue } from './results.js'

/** The `lsp` tool's canonical value (one of four kinds). */
export type LspValue =
  | { kind: 'locations'; locations: LocationValue[]; resolvedWorkspaceUri: string; truncated: boolean; withheld: number }
  | { kind: 'hover'; hover: { contents: string; range?: RangeValue } | null; withheld: number }
  | { kind: 'symbols'; symbols: SymbolValue[]; resolvedWorkspaceUri: string; truncated: boolean; withheld: number }
  | { kind: 'diagnostics'; uri: string; diagnostics: DiagnosticValue[]; upToDate: boolean; resolvedWorkspaceUri: string; truncated: boolean }

/** A URI as the model reads it: workspace-relative, absolute outside the workspace, verbatim if not a file URI. */
export function displayUri(uri: string, workspaceUri: string): string {
  const base = workspaceUri.endsWith('/') ? workspaceUri : `${workspaceUri}/`
  try {
    if (uri.startsWith(base)) return decodeURIComponent(uri.slice(base.length))
    if (uri.startsWith('file:')) return fileURLToPath(uri)
  } catch {
    // Malformed: shown as sent.
  }
  return uri
}

/** `path:line:column` (1-based) of a range, each distinct URI decoded once per rendering (results crowd into few files). */
function positions(root: string): (uri: string, range: RangeValue) => string {
  const shown = new Map<string, string>()
  return (uri, range) => {
    let path = shown.get(uri)
    if (path === undefined) shown.set(uri, (path = displayUri(uri, root)))
    return `${path}:${range.start.line + 1}:${range.start.character + 1}`
  }
}

function capped(lines: string[], total: number, limit: number, noun: string, truncated: boolean): string {
  let text = lines.join('\n')
  if (total > limit) text += `\n… ${total - limit} more ${noun} omitted (limit ${limit}).`
  if (truncated) text += `\n(The server returned more ${noun} than the plugin keeps; narrow the query.)`
  return text
}

/** The notice for results left out by path rules, on its own line after what is shown. */
function withheldNotice(withheld: number, noun: string): string {
  if (!withheld) return ''
  return `\n(${withheld} ${withheld === 1 ? noun.replace(/s$/, '') : noun} withheld: in files the path rules do not let this call read.)`
}

/** Renders one lsp value; at most `pageSize` entries are listed (positions 1-based). */
export function renderLsp(value: LspValue, pageSize: number): string {
  switch (value.kind) {
    case 'hover':
      if (value.withheld) return 'Hover withheld: the symbol is declared in a file the path rules do not let this call read.'
      return value.hover ? value.hover.contents : 'No hover information.'
    case 'locations': {
      if (!value.locations.length) return `No results.${withheldNotice(value.withheld, 'locations')}`
      // Grouped by file in first-seen order, so references in one file read together.
      const byFile = new Map<string, LocationValue[]>()
      for (const location of value.locations.slice(0, pageSize)) {
        const list = byFile.get(location.uri) ?? []
        list.push(location)
        byFile.set(location.uri, list)
      }
      const at = positions(value.resolvedWorkspaceUri)
      const lines = [...byFile.values()].flat().map((location) => at(location.uri, location.range))
      return capped(lines, value.locations.length, pageSize, 'locations', value.truncated) + withheldNotice(value.withheld, 'locations')
    }
    case 'symbols': {
      if (!value.symbols.length) return `No symbols.${withheldNotice(value.withheld, 'symbols')}`
      const at = positions(value.resolvedWorkspaceUri)
      const lines = value.symbols.slice(0, pageSize).map((symbol) => {
        const name = symbol.containerName ? `${symbol.containerName}.${symbol.name}` : symbol.name
        return `${name} (${symbol.kind}) ${at(symbol.uri, symbol.range)}`
      })
      return capped(lines, value.symbols.length, pageSize, 'symbols', value.truncated) + withheldNotice(value.withheld, 'symbols')
    }
    case 'diagnostics': {
      const path = displayUri(value.uri, value.resolvedWorkspaceUri)
      const stale = value.upToDate ? '' : '\n(The server has not finished checking the current text; these may be out of date. Call again shortly.)'
      if (!value.diagnostics.length) return `No diagnostics in ${path}.${stale}`
      const lines = value.diagnostics.slice(0, pageSize).map((item) => {
        const origin = [item.source, item.code].filter(Boolean).join(' ')
        return `${path}:${item.range.start.line + 1}:${item.range.start.character + 1}: ${item.severity}${origin ? ` [${origin}]` : ''}: ${item.message.replace(/\n/g, '\n    ')}`
      })
      return capped(lines, value.diagnostics.length, pageSize, 'diagnostics', value.truncated) + stale
    }
  }
}
