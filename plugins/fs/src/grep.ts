import { dirname } from 'node:path'
import Schema from 'schemastery'
import { defineTool, type Infer, type ToolExec } from '@cordage/core'
import type { OpenedFile } from '@cordage/services'
import { nodeGrep } from './fallback.js'
import { pageFooter, takePage } from './page.js'
import { ripgrepGrep } from './ripgrep.js'
import type { FsRuntime } from './runtime.js'
import type { PagedTool } from './spill.js'
import { PipelinedCheck } from './pipelined-check.js'
import { keepVerifiedMatches } from './recheck.js'
import type { FoundMatch } from './search.js'
import { resolveSearchRoot, type SearchRoot } from './search-root.js'

const Parameters = Schema.object({
  pattern: Schema.string().min(1).required().description('Regular expression (ripgrep syntax) to search file contents for.'),
  path: Schema.string().description('File or directory to search, relative to the workspace root (default: the root).'),
  glob: Schema.string().description('Only search files matching this glob (e.g. "*.ts").'),
  case_insensitive: Schema.boolean().default(false).description('Match case-insensitively.'),
  context: Schema.natural().max(20).default(0).description('Lines of context to show before and after each match.'),
})

const ContextLine = Schema.object({ lineNumber: Schema.natural().required(), line: Schema.string().required() })
const Output = Schema.object({
  matches: Schema.array(
    Schema.object({
      path: Schema.string().required(),
      lineNumber: Schema.natural().required(),
      line: Schema.string().required(),
      before: Schema.array(ContextLine).description('Non-matching lines within `context` lines before (only when context > 0).'),
      after: Schema.array(ContextLine).description('Non-matching lines within `context` lines after (only when context > 0).'),
    }),
  )
    .required()
    .description('Matching lines sorted by path and line number; paths relative to the workspace root.'),
  truncated: Schema.boolean().required().description('True when the collection limit stopped the search (there are more matches).'),
})

type Match = {
  path: string
  lineNumber: number
  line: string
  before?: Array<{ lineNumber: number; line: string }>
  after?: Array<{ lineNumber: number; line: string }>
}
type GrepValue = { matches: Match[]; truncated: boolean }

// Matches per verification while the search streams (whole files: a file's matches arrive together).
const CHECK_BATCH = 64

/** One rendered entry per match, `path:line:text` (context as `path-line-text`, gaps as `--`), lines shown once. */
function entries(matches: readonly Match[]): string[] {
  const out: string[] = []
  let lastPath = ''
  let lastLine = 0
  for (const match of matches) {
    const rows: string[] = []
    const sameFile = match.path === lastPath
    const lines = [...(match.before ?? []), { lineNumber: match.lineNumber, line: match.line, hit: true }, ...(match.after ?? [])] as Array<{
      lineNumber: number
      line: string
      hit?: boolean
    }>
    for (const line of lines) {
      if (sameFile && line.lineNumber <= lastLine) continue
      if ((match.before || match.after) && rows.length === 0 && out.length > 0 && (!sameFile || line.lineNumber > lastLine + 1)) rows.push('--')
      rows.push(`${match.path}${line.hit ? ':' : '-'}${line.lineNumber}${line.hit ? ':' : '-'}${line.line}`)
      lastLine = line.lineNumber
    }
    lastPath = match.path
    out.push(rows.join('\n'))
  }
  return out
}

/** The `grep` tool: regex search of file contents (ripgrep, or the JS fallback); renders the first page. */
export function grepTool(runtime: FsRuntime): PagedTool {
  const { settings, workspace } = runtime
  const page = (args: { pattern: string }, value: GrepValue, spilled?: string) => {
    if (value.matches.length === 0) return `No matches for ${JSON.stringify(args.pattern)}.`
    const { text, shown } = takePage(entries(value.matches.slice(0, settings.pageSize)), settings.pageSize, settings.pageBytes)
    const files = new Set(value.matches.map((match) => match.path)).size
    return `${text}${pageFooter(shown, value.matches.length, 'matches', value.truncated, settings.maxResults, spilled)}${shown === value.matches.length && !value.truncated ? `\n\n(${value.matches.length} ${value.matches.length === 1 ? 'match' : 'matches'} in ${files} ${files === 1 ? 'file' : 'files'}.)` : ''}`
  }
  const search = async (root: SearchRoot, args: Infer<typeof Parameters>, exec: ToolExec) => {
    const { signal } = exec
    // A directory walk's matches are verified file by file while the search streams (a single file was opened and verified
    // itself); each file is shown to path rules as it is opened to verify them (another name of a denied file is refused).
    const admit = (file: OpenedFile) => runtime.admit(exec, file, 'read')
    const cwd = root.cwd
    const check = cwd
      ? new PipelinedCheck<FoundMatch>((matches) => keepVerifiedMatches(workspace, cwd, matches, settings.maxLineLength, admit), CHECK_BATCH)
      : undefined
    const query = {
      cwd: root.cwd ?? dirname(root.real),
      realCwd: root.cwd ? root.real : dirname(root.real),
      file: root.file,
      pattern: args.pattern,
      glob: args.glob,
      caseInsensitive: args.case_insensitive,
      context: args.context,
      max: settings.maxResults,
      maxLineLength: settings.maxLineLength,
      signal: AbortSignal.any([signal, runtime.lifetime]),
      onItems: check && ((matches: readonly FoundMatch[]) => check.add(matches)),
    }
    const found = runtime.rgPath ? await ripgrepGrep(runtime.rgPath, query) : await nodeGrep(workspace.root, query)
    const verified = check && (await check.kept())
    const kept = verified ? found.items.filter((match) => verified.has(match)) : found.items
    const display = root.file ? workspace.display(root.real) : undefined
    const matches = kept.map((match) => ({ ...match, path: display ?? root.prefix + match.path }))
    // Context arrays are optional in the value; schemastery's inferred type marks arrays as always present.
    return { matches, truncated: found.truncated } as unknown as Infer<typeof Output>
  }
  const definition = defineTool({
    name: 'grep',
    description:
      'Search file contents with a regular expression (ripgrep syntax). Skips hidden, binary and .gitignore-excluded files. Returns matching lines as path:line:text.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (args, value) => [{ type: 'text', text: page(args, value) }],
    },
    concurrency: 'parallel',
    paths: [{ pointer: '/path', access: 'read', default: '.' }],
    async execute(args, exec) {
      const root = await resolveSearchRoot(workspace, args.path, true, (file) => runtime.admit(exec, file, 'read'))
      try {
        return await search(root, args, exec)
      } finally {
        await root.close()
      }
    },
  })
  return {
    definition,
    spillName: 'matches.txt',
    fullText: (value: GrepValue) => entries(value.matches).join('\n') + '\n',
    fits: (value: GrepValue) =>
      value.matches.length <= settings.pageSize && takePage(entries(value.matches), settings.pageSize, settings.pageBytes).shown >= value.matches.length,
    page,
  }
}
