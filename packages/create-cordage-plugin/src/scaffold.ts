import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ScaffoldError } from './errors.js'
import { standaloneManifest, standaloneTsconfigs, workspaceManifest, workspaceTsconfig } from './manifest.js'
import { pluginNames, type PluginNames } from './names.js'

/** What to scaffold and where. */
export interface ScaffoldOptions {
  /** The name as typed: `word-stats`, `cordage-plugin-word-stats` or `@me/word-stats`. */
  name: string
  /** Target directory, relative to `cwd` (default: the package name without its scope; in the repository, `plugins/<name>`). */
  directory?: string
  /** Scaffold a plugin inside the Cordage repository whose root is `cwd` (what `pnpm new-plugin` does). */
  workspace?: boolean
  /** Default: `process.cwd()`. */
  cwd?: string
}

/** What was written. */
export interface ScaffoldResult {
  directory: string
  names: PluginNames
  /** Paths relative to `directory`, sorted. */
  files: string[]
}

const TEMPLATE = fileURLToPath(new URL('../template/', import.meta.url))
const OWN_MANIFEST = new URL('../package.json', import.meta.url)

/** Template files (relative paths) under `dir`. */
function templateFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix)).flatMap((entry) => {
    const path = join(prefix, entry)
    return statSync(join(dir, path)).isDirectory() ? templateFiles(dir, path) : [path]
  })
}

function substitute(text: string, names: PluginNames): string {
  return text
    .replaceAll('__package__', names.packageName)
    .replaceAll('__name__', names.name)
    .replaceAll('__tool__', names.tool)
    .replaceAll('__camel__', names.camel)
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** A tsconfig as the repository's formatter writes it: a short list of strings on one line (package.json keeps npm's layout). */
function tsconfigJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2).replace(/\[\n\s*("[^"\n]*"(?:,\n\s*"[^"\n]*")*)\n\s*\]/g, (list, items: string) =>
    list.length < 100 ? `[${items.split(/,\n\s*/).join(', ')}]` : list,
  )
  return `${text}\n`
}

const STANDALONE_DEVELOPMENT = `| Command | What it does |
|---|---|
| \`npm test\` | Typechecks, then runs \`tests/*.test.ts\`: the shared tool contract suite and this tool's own cases. |
| \`npm run bench\` | \`tests/*.bench.ts\`: the tool through the registry against its bare function, medians and ratio. |
| \`npm run build\` | \`tsc\` into \`dist/\` (\`npm publish\` runs it before packing). |`

const workspaceDevelopment = (name: string) => `| Command | What it does |
|---|---|
| \`pnpm test --project plugins/${name}\` | \`tests/*.test.ts\`: the shared tool contract suite and this tool's own cases. |
| \`pnpm exec vitest bench --run --project plugins/${name}\` | \`tests/*.bench.ts\`: the tool through the registry against its bare function. |
| \`pnpm build\` | Builds every package, this one included (\`tsconfig.build.json\`). |`

/** Reads the repository facts a new plugin copies: the version its packages share and the repository URL. */
function workspaceFacts(root: string): { version: string; repositoryUrl: string } {
  const buildConfig = join(root, 'tsconfig.build.json')
  if (!existsSync(join(root, 'pnpm-workspace.yaml')) || !existsSync(buildConfig) || !existsSync(join(root, 'packages/core/package.json')))
    throw new ScaffoldError(
      'NOT_A_WORKSPACE',
      `${root} is not the root of the Cordage repository (no pnpm-workspace.yaml, tsconfig.build.json or packages/core)`,
    )
  const core = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8'))
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  return { version: core.version, repositoryUrl: rootManifest.repository?.url ?? '' }
}

/** Every file of the new package, by relative path. */
function render(names: PluginNames, workspace: boolean, root: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const path of templateFiles(TEMPLATE)) {
    if (path === 'gitignore' && workspace) continue
    const target = path === 'gitignore' ? '.gitignore' : substitute(path, names)
    const text = substitute(readFileSync(join(TEMPLATE, path), 'utf8'), names)
    files[target] = text.replace('__development__', workspace ? workspaceDevelopment(names.name) : STANDALONE_DEVELOPMENT)
  }
  if (workspace) {
    const { version, repositoryUrl } = workspaceFacts(root)
    files['package.json'] = json(workspaceManifest(names, version, repositoryUrl))
    files['tsconfig.json'] = tsconfigJson(workspaceTsconfig())
  } else {
    const own = JSON.parse(readFileSync(OWN_MANIFEST, 'utf8'))
    files['package.json'] = json(standaloneManifest(names, own.version))
    for (const [path, config] of Object.entries(standaloneTsconfigs())) files[path] = tsconfigJson(config)
  }
  return files
}

/** Adds the new plugin to the repository's build (`tsconfig.build.json` references). */
function addToBuild(root: string, directory: string): void {
  const path = join(root, 'tsconfig.build.json')
  const config = JSON.parse(readFileSync(path, 'utf8'))
  const reference = relative(root, directory)
  if (!config.references.some((entry: { path: string }) => entry.path === reference)) {
    config.references.push({ path: reference })
    writeFileSync(path, json(config))
  }
}

/**
 * Writes a new tool-family package: one example tool (schemas, body, renderer, a coded error), a
 * strict config, a README in the house template, contract tests, a benchmark and a build. Refuses a
 * target that exists and is not an empty directory; never overwrites a file.
 */
export function scaffold(options: ScaffoldOptions): ScaffoldResult {
  const workspace = options.workspace ?? false
  const names = pluginNames(options.name, { workspace })
  const root = resolve(options.cwd ?? process.cwd())
  const directory = resolve(root, options.directory ?? (workspace ? join('plugins', names.name) : names.packageName.replace(/^@[^/]+\//, '')))
  if (existsSync(directory) && (!statSync(directory).isDirectory() || readdirSync(directory).length > 0))
    throw new ScaffoldError('TARGET_NOT_EMPTY', `${directory} already exists and is not an empty directory; choose another name or --directory`)
  const files = render(names, workspace, root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(directory, path)), { recursive: true })
    // 'wx': a file that appeared since the check above is not overwritten.
    writeFileSync(join(directory, path), text, { flag: 'wx' })
  }
  if (workspace) addToBuild(root, directory)
  return { directory, names, files: Object.keys(files).sort() }
}
