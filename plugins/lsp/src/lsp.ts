import Schema from 'schemastery'
import { defineTool, type ToolDefinition, type ToolExec } from '@cordage/core'
import type { ServerCapabilities } from 'vscode-languageserver-protocol'
import { LspError } from './errors.js'
import type { ServerPool } from './pool.js'
import { renderLsp, type LspValue } from './render.js'
import { toDiagnostics, toLocations, toSymbols } from './results.js'
import { hoverScreened } from './hover.js'
import type { LanguageServer } from './server.js'
import { readSource, type Workspace } from './workspace.js'
import { ResultScreen } from './withhold.js'

/** The limits the tool works within (from the plugin config). */
export interface LspSettings {
  startTimeoutMs: number
  requestTimeoutMs: number
  diagnosticsWaitMs: number
  diagnosticsSettleMs: number
  maxFileBytes: number
  maxResults: number
  pageSize: number
}

const Parameters = Schema.object({
  operation: Schema.union(['definition', 'references', 'implementation', 'hover', 'symbols', 'diagnostics'] as const)
    .required()
    .description('What to ask the language server.'),
  path: Schema.string().pattern(/\S/).required().description('Source file, relative to the workspace root (or absolute inside it).'),
  line: Schema.natural().min(1).description('1-based line of the cursor (definition, references, implementation, hover).'),
  character: Schema.natural().min(1).description('1-based column of the cursor in UTF-16 code units (definition, references, implementation, hover).'),
  query: Schema.string().description("symbols: search the whole workspace for this name instead of listing the file's symbols."),
})

const Position = Schema.object({ line: Schema.natural().required(), character: Schema.natural().required() })
const Range = Schema.object({ start: Position.required(), end: Position.required() })
const Location = Schema.object({ uri: Schema.string().required(), range: Range.required() })
const Withheld = Schema.natural().required().description('Results left out because they are in files the path rules do not let this call read.')
const Output = Schema.union([
  Schema.object({
    kind: Schema.const('locations').required(),
    locations: Schema.array(Location).required(),
    resolvedWorkspaceUri: Schema.string().required(),
    truncated: Schema.boolean().required(),
    withheld: Withheld,
  }),
  Schema.object({
    kind: Schema.const('hover').required(),
    hover: Schema.union([Schema.object({ contents: Schema.string().required(), range: Range }), Schema.const(null)]).required(),
    withheld: Withheld,
  }),
  Schema.object({
    kind: Schema.const('symbols').required(),
    resolvedWorkspaceUri: Schema.string().required(),
    truncated: Schema.boolean().required(),
    withheld: Withheld,
    symbols: Schema.array(
      Schema.object({
        name: Schema.string().required(),
        kind: Schema.string().required(),
        containerName: Schema.string(),
        uri: Schema.string().required(),
        range: Range.required(),
      }),
    ).required(),
  }),
  Schema.object({
    kind: Schema.const('diagnostics').required(),
    uri: Schema.string().required(),
    upToDate: Schema.boolean().required(),
    resolvedWorkspaceUri: Schema.string().required(),
    truncated: Schema.boolean().required(),
    diagnostics: Schema.array(
      Schema.object({
        range: Range.required(),
        severity: Schema.union(['error', 'warning', 'information', 'hint'] as const).required(),
        message: Schema.string().required(),
        source: Schema.string(),
        code: Schema.string(),
      }),
    ).required(),
  }),
])

const CAPABILITY: Record<string, keyof ServerCapabilities> = {
  definition: 'definitionProvider',
  implementation: 'implementationProvider',
  references: 'referencesProvider',
  hover: 'hoverProvider',
  symbols: 'documentSymbolProvider',
  workspaceSymbols: 'workspaceSymbolProvider',
}

/** The 0-based LSP position of 1-based cursor arguments, checked against the document's text. */
function position(text: string, display: string, line: number, character: number): { line: number; character: number } {
  const lines = text.split('\n')
  if (line > lines.length) throw new LspError('LSP_POSITION_OUT_OF_RANGE', `line ${line} is past the end of ${display}, which has ${lines.length} lines`)
  const length = lines[line - 1]!.replace(/\r$/, '').length
  if (character > length + 1)
    throw new LspError(
      'LSP_POSITION_OUT_OF_RANGE',
      `character ${character} is past the end of line ${line} of ${display}, which has ${length} characters (columns are 1-based UTF-16 units)`,
    )
  return { line: line - 1, character: character - 1 }
}

function requireCapability(server: LanguageServer, capability: keyof ServerCapabilities, operation: string): void {
  if (!server.capabilities[capability]) throw new LspError('LSP_UNSUPPORTED_OPERATION', `the ${server.spec.name} language server does not support ${operation}`)
}

/** The `lsp` tool: one question to the language server configured for the file. `mayRead` screens results in other files. */
export function lspTool(
  workspace: Workspace,
  pool: ServerPool,
  settings: LspSettings,
  mayRead: (exec: ToolExec, path: string) => string | undefined,
): ToolDefinition {
  const keep = <T>(items: T[]) => ({ items: items.slice(0, settings.maxResults), truncated: items.length > settings.maxResults })
  return defineTool({
    name: 'lsp',
    description:
      'Ask a language server about code: definition, references (declaration included), implementation (of an interface, abstract member or type) or hover at a 1-based line/character; symbols of a file (or of the workspace with query); diagnostics (errors and warnings) of a file as it is on disk now. Use it when text search is ambiguous or to check a change compiles.',
    parameters: Parameters,
    output: { schema: Output, render: (_args, value) => [{ type: 'text', text: renderLsp(value as LspValue, settings.pageSize) }] },
    paths: [{ pointer: '/path', access: 'read' }],
    annotations: { readOnlyHint: true },
    concurrency: 'parallel',
    // A backstop over the steps' own limits: start, one request, the diagnostics wait.
    timeoutMs: settings.startTimeoutMs + settings.requestTimeoutMs + settings.diagnosticsWaitMs + 5000,
    async execute(args, exec) {
      const file = workspace.file(args.path)
      const spec = pool.specFor(file.display)
      if (!spec)
        throw new LspError('LSP_NO_SERVER', `no language server is configured for ${file.display}; the lsp plugin's servers config maps file globs to servers`)
      const operation = args.operation
      const cursor = operation !== 'symbols' && operation !== 'diagnostics'
      if (cursor && (args.line === undefined || args.character === undefined)) {
        throw new LspError('LSP_POSITION_REQUIRED', `${operation} needs line and character (1-based) of the symbol in ${file.display}`)
      }
      const text = await readSource(file, settings.maxFileBytes)
      const at = cursor ? position(text, file.display, args.line!, args.character!) : undefined
      const root = workspace.uri
      const timeout = settings.requestTimeoutMs
      const screen = new ResultScreen(file.uri, (path) => mayRead(exec, path))
      return pool.run(spec, exec.signal, async (server): Promise<any> => {
        const document = await pool.sync(server, file, text)
        const textDocument = { uri: file.uri }
        if (cursor) {
          requireCapability(server, CAPABILITY[operation]!, operation)
          const params = { textDocument, position: at, ...(operation === 'references' && { context: { includeDeclaration: true } }) }
          if (operation === 'hover') return hoverScreened(server, params, screen, exec.signal, timeout)
          const result = await server.request(`textDocument/${operation}`, params, exec.signal, timeout)
          const { items, truncated } = keep(screen.keep(toLocations(result)))
          return { kind: 'locations', locations: items, resolvedWorkspaceUri: root, truncated, withheld: screen.withheld }
        }
        if (operation === 'symbols') {
          const workspaceWide = args.query !== undefined && args.query.trim() !== ''
          requireCapability(server, CAPABILITY[workspaceWide ? 'workspaceSymbols' : 'symbols']!, workspaceWide ? 'workspace symbols' : 'document symbols')
          const result = workspaceWide
            ? await server.request('workspace/symbol', { query: args.query!.trim() }, exec.signal, timeout)
            : await server.request('textDocument/documentSymbol', { textDocument }, exec.signal, timeout)
          const { items, truncated } = keep(screen.keep(toSymbols(result, file.uri)))
          return { kind: 'symbols', symbols: items, resolvedWorkspaceUri: root, truncated, withheld: screen.withheld }
        }
        let raw
        let upToDate = true
        if (server.capabilities.diagnosticProvider) {
          const report = (await server.request('textDocument/diagnostic', { textDocument }, exec.signal, timeout)) as { items?: unknown[] } | null
          raw = report?.items ?? []
        } else {
          const fresh = await server.diagnostics(file.uri, server.lastSentSeq, document.version, {
            waitMs: settings.diagnosticsWaitMs,
            settleMs: settings.diagnosticsSettleMs,
            signal: exec.signal,
          })
          if (exec.signal.aborted) throw exec.signal.reason
          upToDate = fresh !== undefined
          raw = fresh ?? server.lastDiagnostics(file.uri) ?? []
        }
        const { items, truncated } = keep(toDiagnostics(raw as any))
        return { kind: 'diagnostics', uri: file.uri, diagnostics: items, upToDate, resolvedWorkspaceUri: root, truncated }
      })
    },
  })
}
