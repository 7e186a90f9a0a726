// The house rules a lint can check: every plugin has the one plugin shape (CONTRIBUTING "The shape of a
// plugin"), every dependency arrow points downward (ARCHITECTURE "Layers"), and ARCHITECTURE's
// "Dependency graph" draws exactly the package.json edges. Run on the build
// (`pnpm build` first): the shape is checked on the module Node loads, as `cordage.yml` loads it.
// Usage: node scripts/check-plugins.mjs [root]   (root defaults to the working directory)
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Exports a plugin's index may have at most: the shape's five plus a few public types' runtime values. */
export const MAX_EXPORTS = 12
/** Lines a plugin's `src/index.ts` may have (composition only). */
export const MAX_INDEX_LINES = 120

/**
 * Which workspace packages each package may depend on at run time (dependencies and peers; tests may use
 * anything). Rank order is the layering: a package names only packages listed for it.
 */
export const PACKAGE_LAYERS = {
  '@cordage/core': [],
  '@cordage/process': [],
  '@cordage/registry': ['@cordage/core'],
  '@cordage/services': ['@cordage/core'],
  '@cordage/agent': ['@cordage/core', '@cordage/registry', '@cordage/services'],
  '@cordage/testing': ['@cordage/core', '@cordage/registry', '@cordage/services', '@cordage/agent'],
  '@cordage/server': ['@cordage/core', '@cordage/registry', '@cordage/services', '@cordage/agent'],
  '@cordage/studio': ['@cordage/services'],
  '@cordage/queue': ['@cordage/core'],
  'create-cordage-plugin': [],
}
/** What any plugin may depend on. */
export const PLUGIN_BASE = ['@cordage/core', '@cordage/registry', '@cordage/services', '@cordage/process']
/** Plugins that run agents, and so may depend on `@cordage/agent`. */
export const RUNS_AGENTS = ['@cordage/plugin-subagent']
/** The application: loads plugins by name, imported by nothing. */
export const APPLICATION = '@cordage/cli'
/**
 * The registry's Cordis seam (`@cordage/registry/cordis-seam`: reads of cordis internals, outside the
 * public API): only these packages' sources import it (the registry's README says why each does).
 */
export const SEAM = '@cordage/registry/cordis-seam'
export const SEAM_USERS = [
  '@cordage/agent',
  '@cordage/testing',
  '@cordage/plugin-subagent',
  '@cordage/plugin-model-openai',
  '@cordage/plugin-model-anthropic',
  '@cordage/plugin-otel',
]

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'))
}

function workspacePackages(root, group) {
  const dir = join(root, group)
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'package.json')))
    .map((entry) => ({ dir: join(dir, entry.name), group, manifest: readJson(join(dir, entry.name, 'package.json')) }))
}

function sourceImports(dir, pattern = /(?:from|import)\s*\(?\s*['"](@cordage\/[^'"/]+|create-cordage-plugin)/g) {
  const found = new Set()
  const walk = (path) => {
    if (!existsSync(path)) return
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (/\.(tsx?|m?js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        const text = readFileSync(child, 'utf8')
        for (const match of text.matchAll(pattern)) found.add(match[1])
      }
    }
  }
  walk(join(dir, 'src'))
  return found
}

/** Layering offences of one package: undeclared imports and arrows that do not point downward. */
function checkLayers(pkg, offences) {
  const { name, dependencies = {}, peerDependencies = {} } = pkg.manifest
  const declared = Object.keys({ ...dependencies, ...peerDependencies }).filter((dep) => dep.startsWith('@cordage/'))
  for (const imported of sourceImports(pkg.dir)) {
    if (imported !== name && !declared.includes(imported)) offences.push(`${name}: src imports ${imported}, which package.json does not declare`)
  }
  if (!SEAM_USERS.includes(name) && sourceImports(pkg.dir, /(?:from|import)\s*\(?\s*['"](@cordage\/registry\/cordis-seam)['"]/g).size)
    offences.push(`${name}: src imports ${SEAM}, which is internal (hold \`ctx.tools\` as given; count listeners with listenerCount)`)
  if (name === APPLICATION || pkg.group === 'examples') return
  const allowed = pkg.group === 'plugins' ? [...PLUGIN_BASE, ...(RUNS_AGENTS.includes(name) ? ['@cordage/agent'] : [])] : PACKAGE_LAYERS[name]
  if (!allowed) {
    offences.push(`${name}: a package with no place in the layering (add it to PACKAGE_LAYERS in scripts/check-plugins.mjs)`)
    return
  }
  for (const dep of declared) {
    if (allowed.includes(dep)) continue
    const why = dep.startsWith('@cordage/plugin-')
      ? 'no package or plugin depends on a plugin (share through @cordage/services)'
      : dep === '@cordage/agent'
        ? 'only plugins that run agents depend on @cordage/agent (the model seam types are in @cordage/services)'
        : `it may depend on ${allowed.join(', ') || 'no workspace package'}`
    offences.push(`${name}: depends on ${dep}, but ${why}`)
  }
}

/** A schemastery schema, or another Standard Schema (zod) where a config's rules need one. */
function isSchema(value) {
  const schemastery = typeof value === 'function' && typeof value.type === 'string' && typeof value.toJSON === 'function'
  return schemastery || (typeof value === 'object' && value !== null && typeof value['~standard']?.validate === 'function')
}

/** Resolves `config` through the schema (schemastery is callable; a Standard Schema validates). */
function resolveConfig(schema, config) {
  return typeof schema === 'function' ? schema(config) : schema['~standard'].validate(config)
}

/** Shape offences of one plugin, checked on its built entry point. */
async function checkShape(pkg, offences) {
  const label = pkg.manifest.name
  const index = join(pkg.dir, 'src', 'index.ts')
  if (existsSync(index)) {
    const lines = readFileSync(index, 'utf8').split('\n').length
    if (lines > MAX_INDEX_LINES) offences.push(`${label}: src/index.ts has ${lines} lines (composition only, at most ${MAX_INDEX_LINES})`)
  }
  const entry = pkg.manifest.exports?.['.']?.default ?? pkg.manifest.main
  const file = entry && join(pkg.dir, entry)
  if (!file || !existsSync(file)) {
    offences.push(`${label}: no built entry point (${entry ?? 'package.json names none'}); run \`pnpm build\` first`)
    return
  }
  let mod
  try {
    mod = await import(pathToFileURL(resolve(file)).href)
  } catch (error) {
    offences.push(`${label}: its entry point fails to load: ${error?.message ?? error}`)
    return
  }
  const named = Object.keys(mod).filter((key) => key !== 'default')
  if (named.length > MAX_EXPORTS) offences.push(`${label}: exports ${named.length} names (at most ${MAX_EXPORTS}: the plugin shape and its public API)`)
  if (typeof mod.name !== 'string' || !mod.name) offences.push(`${label}: exports no \`name\``)
  if (!Array.isArray(mod.inject) && (typeof mod.inject !== 'object' || mod.inject === null))
    offences.push(`${label}: exports no \`inject\` (an array or object, [] when it needs nothing)`)
  if (!isSchema(mod.Config)) offences.push(`${label}: exports no \`Config\` schema (schemastery, or a Standard Schema)`)
  else {
    try {
      resolveConfig(mod.Config, { __unknownKey__: true })
      offences.push(`${label}: Config accepts unknown keys (wrap it in strictConfig(name, …) from @cordage/core)`)
    } catch (error) {
      if (error?.code !== 'INVALID_CONFIG') offences.push(`${label}: Config rejects unknown keys without INVALID_CONFIG (use strictConfig)`)
    }
  }
  const plugin = mod.default
  if (plugin === undefined) offences.push(`${label}: has no default export (the plugin itself)`)
  else if (typeof plugin === 'function') {
    if (plugin.Config !== mod.Config) offences.push(`${label}: the default export's static Config is not the exported Config`)
    if (plugin.inject !== mod.inject) offences.push(`${label}: the default export's static inject is not the exported inject`)
  } else if (typeof plugin === 'object' && plugin !== null) {
    if (typeof plugin.apply !== 'function') offences.push(`${label}: the default export has no apply`)
    for (const key of ['name', 'inject', 'Config']) {
      if (plugin[key] !== mod[key]) offences.push(`${label}: the default export's ${key} is not the exported ${key}`)
    }
  } else offences.push(`${label}: the default export is not a plugin`)
}

const EDGE_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies']
const ARROW = '→'

/** ARCHITECTURE's short name (`@cordage/` left out) of a package name, and back. */
const shortName = (name) => name.replace(/^@cordage\//, '')
const fullName = (short) => (short === 'create-cordage-plugin' ? short : `@cordage/${short}`)

/**
 * The edges drawn in the first fenced block under "## Dependency graph" of `text`: lines `names → deps`
 * (comma-separated, `—` for none). An unindented line without an arrow starts or continues the names of
 * the next arrow; an indented one continues the dependencies of the line before. `undefined` when there
 * is no such block.
 */
export function drawnGraph(text) {
  const block = /^## Dependency graph\n[\s\S]*?^```[^\n]*\n([\s\S]*?)^```/m.exec(text)?.[1]
  if (block === undefined) return undefined
  const list = (part) =>
    part
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item && item !== '—')
  const entries = []
  let pending = []
  let current
  for (const line of block.split('\n')) {
    if (!line.trim()) continue
    if (line.includes(ARROW)) {
      const [left, right] = line.split(ARROW)
      current = { names: [...pending, ...list(left)], deps: list(right) }
      pending = []
      entries.push(current)
    } else if (/^\s/.test(line) && current && !pending.length) current.deps.push(...list(line))
    else {
      pending.push(...list(line))
      current = undefined
    }
  }
  const graph = new Map()
  const repeated = []
  for (const { names, deps } of entries) {
    for (const name of names.map(fullName)) {
      if (graph.has(name)) repeated.push(name)
      graph.set(name, new Set(deps.map(fullName)))
    }
  }
  return { graph, repeated }
}

/** Offences where ARCHITECTURE.md's dependency graph and the packages' package.json files differ. */
export function checkArchitecture(root) {
  const file = join(root, 'ARCHITECTURE.md')
  if (!existsSync(file)) return ['ARCHITECTURE.md is missing']
  const drawn = drawnGraph(readFileSync(file, 'utf8'))
  if (!drawn) return ['ARCHITECTURE.md has no "## Dependency graph" block']
  const offences = drawn.repeated.map((name) => `ARCHITECTURE.md draws ${shortName(name)} twice`)
  const packages = [...workspacePackages(root, 'packages'), ...workspacePackages(root, 'plugins')].map((pkg) => pkg.manifest)
  const names = new Set(packages.map((manifest) => manifest.name))
  for (const manifest of packages) {
    const declared = new Set(EDGE_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {})).filter((dep) => names.has(dep)))
    const edges = drawn.graph.get(manifest.name)
    const short = shortName(manifest.name)
    if (!edges) {
      offences.push(`ARCHITECTURE.md: ${short} is not in the dependency graph`)
      continue
    }
    for (const dep of declared)
      if (!edges.has(dep)) offences.push(`${short} depends on ${shortName(dep)} (package.json), which ARCHITECTURE.md's graph does not draw`)
    for (const dep of edges)
      if (!declared.has(dep)) offences.push(`ARCHITECTURE.md draws ${short} → ${shortName(dep)}, which ${short}'s package.json does not declare`)
  }
  for (const name of drawn.graph.keys())
    if (!names.has(name)) offences.push(`ARCHITECTURE.md draws ${shortName(name)}, which is no package under packages/ or plugins/`)
  return offences
}

/** Every offence under `root`, in a stable order. */
export async function checkHouse(root) {
  const offences = []
  const packages = [...workspacePackages(root, 'packages'), ...workspacePackages(root, 'plugins'), ...workspacePackages(root, 'examples')]
  for (const pkg of packages) {
    checkLayers(pkg, offences)
    if (pkg.group === 'plugins') await checkShape(pkg, offences)
  }
  return offences
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(process.argv[2] ?? '.')
  const offences = await checkHouse(root)
  const drawing = checkArchitecture(root)
  if (offences.length) console.error(`plugin shape and layering (CONTRIBUTING "The shape of a plugin", ARCHITECTURE "Layers"):\n${offences.join('\n')}`)
  if (drawing.length) console.error(`ARCHITECTURE.md "Dependency graph" against the package.json files:\n${drawing.join('\n')}`)
  if (offences.length || drawing.length) process.exit(1)
}
