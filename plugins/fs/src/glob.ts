import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { FsError } from './errors.js'
import { nodeGlob } from './fallback.js'
import { pageFooter, takePage } from './page.js'
import { ripgrepGlob } from './ripgrep.js'
import type { FsRuntime } from './runtime.js'
import type { PagedTool } from './spill.js'
import { PipelinedCheck } from './pipelined-check.js'
import { keepContained } from './recheck.js'
import { resolveSearchRoot } from './search-root.js'

const Parameters = Schema.object({
  pattern: Schema.string().min(1).required().description('Glob such as "**/*.ts" or "src/*.json". Without a "/" it matches file names at any depth.'),
  path: Schema.string().description('Directory to search in, relative to the workspace root (default: the root).'),
})

const Output = Schema.object({
  paths: Schema.array(String).required().description('Matching files, relative to the workspace root, sorted.'),
  truncated: Schema.boolean().required().description('True when the collection limit stopped the search (there are more files).'),
})

type GlobValue = { paths: string[]; truncated: boolean }

// Paths per containment check while the walk streams: large enough that a directory's files share one check.
const CHECK_BATCH = 256

/** The `glob` tool: lists files by pattern, honouring .gitignore; renders the first page. */
export function globTool(runtime: FsRuntime): PagedTool {
  const { settings, workspace } = runtime
  const page = (args: { pattern: string }, value: GlobValue, spilled?: string) => {
    if (value.paths.length === 0) return `No files match ${JSON.stringify(args.pattern)}.`
    const { text, shown } = takePage(value.paths, settings.pageSize, settings.pageBytes)
    return text + pageFooter(shown, value.paths.length, 'paths', value.truncated, settings.maxResults, spilled)
  }
  const definition = defineTool({
    name: 'glob',
    description:
      'Find files by glob pattern (e.g. "**/*.ts"). Skips hidden files and what .gitignore excludes. Returns paths relative to the workspace root, sorted.',
    parameters: Parameters,
    output: {
      schema: Output,
      render: (args, value) => [{ type: 'text', text: page(args, value) }],
    },
    concurrency: 'parallel',
    paths: [{ pointer: '/path', access: 'read', default: '.' }],
    async execute(args, exec) {
      const root = await resolveSearchRoot(workspace, args.path, false, (file) => runtime.admit(exec, file, 'read'))
      try {
        const { cwd, prefix } = root
        if (cwd === undefined) throw new FsError('NOT_A_DIRECTORY', `${args.path} is a file; glob needs a directory as path`)
        // Paths are checked against the root while the walk still streams them.
        const check = new PipelinedCheck<string>(async (paths) => {
          const inside = await keepContained(workspace, cwd, paths)
          return paths.filter((path) => inside.has(path))
        }, CHECK_BATCH)
        const signal = AbortSignal.any([exec.signal, runtime.lifetime])
        const query = {
          cwd,
          realCwd: root.real,
          pattern: args.pattern,
          max: settings.maxResults,
          signal,
          onItems: (paths: readonly string[]) => check.add(paths),
        }
        const found = runtime.rgPath ? await ripgrepGlob(runtime.rgPath, query) : await nodeGlob(workspace.root, query)
        const kept = await check.kept()
        return { paths: found.items.filter((item) => kept.has(item)).map((item) => prefix + item), truncated: found.truncated }
      } finally {
        await root.close()
      }
    },
  })
  return {
    definition,
    spillName: 'paths.txt',
    fullText: (value: GlobValue) => value.paths.join('\n') + '\n',
    fits: (value: GlobValue) => takePage(value.paths, settings.pageSize, settings.pageBytes).shown >= value.paths.length,
    page,
  }
}
