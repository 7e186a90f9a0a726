import { toHover, toLocations } from './results.js'
import type { LanguageServer } from './server.js'
import type { ResultScreen } from './withhold.js'

/**
 * A hover, unless the symbol is declared (or its type is) in a file the caller may not read: the hover
 * text quotes declarations, so it is withheld when the definition or type definition at the same
 * position lies in such a file. Asked alongside the hover (one round trip); a server that answers
 * neither cannot be checked and its hover is returned as it is.
 */
export async function hoverScreened(
  server: LanguageServer,
  params: { textDocument: { uri: string }; position: unknown },
  screen: ResultScreen,
  signal: AbortSignal,
  timeoutMs: number,
) {
  const sources = [
    server.capabilities.definitionProvider && 'textDocument/definition',
    server.capabilities.typeDefinitionProvider && 'textDocument/typeDefinition',
  ].filter((method): method is string => typeof method === 'string')
  const [hover, ...declarations] = await Promise.all([
    server.request('textDocument/hover', params, signal, timeoutMs),
    ...sources.map((method) => server.request(method, params, signal, timeoutMs)),
  ])
  if (declarations.flatMap(toLocations).some((location) => !screen.allows(location.uri))) return { kind: 'hover', hover: null, withheld: 1 }
  return { kind: 'hover', hover: toHover(hover), withheld: 0 }
}
