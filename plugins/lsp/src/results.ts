import type {
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  MarkedString,
  MarkupContent,
  Range,
  SymbolInformation,
  WorkspaceSymbol,
} from 'vscode-languageserver-protocol'

/** A position range in LSP terms: 0-based lines, 0-based UTF-16 characters. */
export interface RangeValue {
  start: { line: number; character: number }
  end: { line: number; character: number }
}

/** One location in a result. */
export interface LocationValue {
  uri: string
  range: RangeValue
}

/** One symbol in a result. */
export interface SymbolValue extends LocationValue {
  name: string
  kind: string
  containerName?: string
}

/** One diagnostic in a result. */
export interface DiagnosticValue {
  range: RangeValue
  severity: 'error' | 'warning' | 'information' | 'hint'
  message: string
  source?: string
  code?: string
}

const SYMBOL_KINDS = [
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum member',
  'struct',
  'event',
  'operator',
  'type parameter',
]
const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const

function isRange(value: any): value is Range {
  return (
    Number.isInteger(value?.start?.line) &&
    Number.isInteger(value?.start?.character) &&
    Number.isInteger(value?.end?.line) &&
    Number.isInteger(value?.end?.character)
  )
}

function range(value: Range): RangeValue {
  return { start: { line: value.start.line, character: value.start.character }, end: { line: value.end.line, character: value.end.character } }
}

/** Definition and references answers (`Location`, `Location[]`, `LocationLink[]`, null) as a flat, deduplicated list. */
export function toLocations(result: unknown): LocationValue[] {
  const items = Array.isArray(result) ? result : result ? [result] : []
  const seen = new Set<string>()
  const locations: LocationValue[] = []
  for (const item of items as Array<Location | LocationLink>) {
    if (typeof item !== 'object' || item === null) continue
    const uri = 'targetUri' in item ? item.targetUri : item?.uri
    const target = 'targetUri' in item ? (item.targetSelectionRange ?? item.targetRange) : item?.range
    if (typeof uri !== 'string' || !isRange(target)) continue
    const key = `${uri}#${target.start.line}:${target.start.character}:${target.end.line}:${target.end.character}`
    if (seen.has(key)) continue
    seen.add(key)
    locations.push({ uri, range: range(target) })
  }
  return locations
}

function markedText(item: MarkedString | MarkupContent): string {
  if (typeof item === 'string') return item
  if ('kind' in item) return item.value
  return `\`\`\`${item.language}\n${item.value}\n\`\`\``
}

/** A hover answer as one Markdown/plain string (null when the server has nothing). */
export function toHover(result: unknown): { contents: string; range?: RangeValue } | null {
  const hover = result as Hover | null
  if (!hover?.contents) return null
  const parts = Array.isArray(hover.contents) ? hover.contents : [hover.contents]
  const contents = parts
    .map(markedText)
    .filter((text) => text.trim())
    .join('\n\n')
    .trim()
  if (!contents) return null
  return { contents, ...(isRange(hover.range) && { range: range(hover.range) }) }
}

/** Document symbols (hierarchical or flat) and workspace symbols as one flat list with container names. */
export function toSymbols(result: unknown, documentUri: string): SymbolValue[] {
  const symbols: SymbolValue[] = []
  const stack: Array<{ item: DocumentSymbol | SymbolInformation | WorkspaceSymbol; container?: string }> = (Array.isArray(result) ? result : [])
    .map((item) => ({ item }))
    .reverse()
  while (stack.length) {
    const { item, container } = stack.pop()!
    if (typeof item?.name !== 'string') continue
    const kind = SYMBOL_KINDS[(item.kind ?? 0) - 1] ?? 'symbol'
    const location = 'location' in item ? item.location : undefined
    const uri = location && 'uri' in location ? location.uri : documentUri
    const where = 'selectionRange' in item ? item.selectionRange : location && 'range' in location ? location.range : undefined
    const containerName = container ?? ('containerName' in item && item.containerName ? item.containerName : undefined)
    if (isRange(where)) symbols.push({ name: item.name, kind, uri, range: range(where), ...(containerName && { containerName }) })
    const children = 'children' in item && Array.isArray(item.children) ? item.children : []
    for (let index = children.length - 1; index >= 0; index--) {
      stack.push({ item: children[index]!, container: containerName ? `${containerName}.${item.name}` : item.name })
    }
  }
  return symbols
}

/** Diagnostics with names for severities and codes as strings. */
export function toDiagnostics(items: Diagnostic[]): DiagnosticValue[] {
  return items
    .filter((item) => isRange(item?.range))
    .map((item) => ({
      range: range(item.range),
      severity: SEVERITIES[(item.severity ?? 1) - 1] ?? 'error',
      message: typeof item.message === 'string' ? item.message : String((item.message as { value?: unknown })?.value ?? ''),
      ...(item.source && { source: item.source }),
      ...(item.code !== undefined && item.code !== null && { code: String(item.code) }),
    }))
}
