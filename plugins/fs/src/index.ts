import type { Context } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import Schema from 'schemastery'
import { ConfigError, strictConfig } from '@cordage/core'
import { editTool } from './edit.js'
import { globTool } from './glob.js'
import { grepTool } from './grep.js'
import { Workspace } from './paths.js'
import { LineIndexCache } from './line-index.js'
import { openedGate } from './opened.js'
import { readTool } from './read.js'
import { findRipgrep } from './ripgrep.js'
import type { FsRuntime } from './runtime.js'
import { spillPages } from './spill.js'
import { ReadTracker } from './tracker.js'
import { writeTool } from './write.js'

/** Plugin name. */
export const name = 'fs'
/** Needs the tool registry; `spill` is used when present, never required. */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  root?: string
  allowOutsideRoot: boolean
  requireReadBeforeWrite: boolean
  maxReadBytes: number
  maxReadLines: number
  maxLineLength: number
  maxEditBytes: number
  maxDiffBytes: number
  maxResults: number
  pageSize: number
  pageBytes: number
  search: 'auto' | 'ripgrep' | 'node'
}

/** The config schema, validated at load; every key is optional on input. */
export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    root: Schema.string().description('Workspace root the tools are confined to (default: the current working directory).'),
    allowOutsideRoot: Schema.boolean().default(false).description('Allow paths outside the root.'),
    requireReadBeforeWrite: Schema.boolean().default(true).description('Refuse to write or edit an existing file the agent has not read.'),
    maxReadBytes: Schema.natural().min(1024).default(50_000).description('Bytes of numbered lines one read returns at most.'),
    maxReadLines: Schema.natural().min(1).default(2000).description('Lines one read returns at most.'),
    maxLineLength: Schema.natural().min(80).default(2000).description('Characters kept of a long line (read and grep).'),
    maxEditBytes: Schema.natural().min(1).default(5_000_000).description('Largest existing file write and edit will change.'),
    maxDiffBytes: Schema.natural().min(1000).default(50_000).description('Largest diff write and edit keep in their presentation metadata.'),
    maxResults: Schema.natural().min(1).default(10_000).description('Paths (glob) or matches (grep) collected at most.'),
    pageSize: Schema.natural().min(1).default(100).description('Paths or matches rendered inline; the rest go to spill.'),
    pageBytes: Schema.natural().min(1000).default(30_000).description('Bytes of the rendered page at most.'),
    search: Schema.union(['auto', 'ripgrep', 'node'])
      .default('auto')
      .description('Search engine: ripgrep when available (auto), ripgrep only, or the pure-JS fallback.'),
  }),
)

/** Registers read, write, edit, glob and grep rooted at `config.root`, plus the glob/grep spill listener. */
export async function apply(ctx: Context, config: Config): Promise<void> {
  const rgPath = config.search === 'node' ? undefined : await findRipgrep()
  if (config.search === 'ripgrep' && !rgPath)
    throw new ConfigError(name, [{ path: 'search', message: '"ripgrep" but the @vscode/ripgrep binary is not installed for this platform' }])
  const lifetime = new AbortController()
  const runtime: FsRuntime = {
    settings: config,
    workspace: new Workspace(config.root ?? process.cwd(), config.allowOutsideRoot),
    tracker: new ReadTracker(config.requireReadBeforeWrite),
    lineIndexes: new LineIndexCache(),
    rgPath,
    lifetime: lifetime.signal,
    admit: openedGate(ctx),
  }
  ctx.effect(
    () => () => {
      runtime.tracker.clear()
      runtime.lineIndexes.clear()
      lifetime.abort(new Error('the fs plugin was unloaded'))
    },
    'fs lifetime',
  )
  const glob = globTool(runtime)
  const grep = grepTool(runtime)
  const tools: ToolRegistry = ctx.tools
  for (const definition of [readTool(runtime), writeTool(runtime), editTool(runtime), glob.definition, grep.definition]) tools.register(definition)
  spillPages(ctx, [glob, grep])
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
