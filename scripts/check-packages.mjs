// Every package that publishes carries what npm and its users need: where it came from, which Node
// it runs on, what it ships, where its entry and types are, and peer ranges a host can satisfy.
// Private packages (the examples that only run here) are skipped.
// Usage: node scripts/check-packages.mjs [root]   (root defaults to the working directory)
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** Offences of the package in `dir` (relative to `rootDir`, e.g. `plugins/fs`), pushed to `offences`. */
function check(rootDir, root, dir, offences) {
  const file = join(dir, 'package.json')
  if (!existsSync(join(rootDir, file))) return
  const pkg = JSON.parse(readFileSync(join(rootDir, file), 'utf8'))
  if (pkg.private) return
  const fail = (message) => offences.push(`${file}: ${message}`)
  for (const key of ['name', 'version', 'description', 'license']) if (typeof pkg[key] !== 'string' || !pkg[key]) fail(`"${key}" is missing`)
  if (pkg.type !== 'module') fail('"type" must be "module"')
  const repository = pkg.repository ?? {}
  if (repository.type !== 'git' || repository.url !== root.repository?.url || repository.directory !== dir)
    fail(`"repository" must be { "type": "git", "url": "${root.repository?.url}", "directory": "${dir}" }`)
  if (pkg.engines?.node !== root.engines?.node) fail(`"engines.node" must be "${root.engines?.node}", as the workspace's`)
  if (!Array.isArray(pkg.files) || !pkg.files.includes('dist')) fail('"files" must list "dist" (and nothing that only builds here)')
  const entry = pkg.exports?.['.']
  if (!entry || typeof entry !== 'object') fail('"exports" must map "." to { types, default }')
  else {
    if (entry.types !== './dist/index.d.ts' || entry.default !== './dist/index.js')
      fail('"exports"["."] must give "types": "./dist/index.d.ts" and "default": "./dist/index.js"')
    const keys = Object.keys(entry)
    // Conditions are matched in order: "default" last, "types" before it.
    if (keys.at(-1) !== 'default' || keys.indexOf('types') > keys.indexOf('default'))
      fail('"exports"["."] must list "types" before "default", and "default" last')
  }
  if (pkg.main !== './dist/index.js' || pkg.types !== './dist/index.d.ts')
    fail('"main" and "types" must be "./dist/index.js" and "./dist/index.d.ts" (for tools that do not read "exports")')
  if (pkg.name.startsWith('@') && pkg.publishConfig?.access !== 'public')
    fail('a scoped package needs "publishConfig": { "access": "public" } (npm would publish it restricted)')
  for (const [name, range] of Object.entries(pkg.peerDependencies ?? {})) {
    // A peer is shared with the host: an exact version (or workspace:*, published as one) refuses every other release.
    if (range === 'workspace:*' || /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(range))
      fail(`peer "${name}": "${range}" pins one version; give a range ("^…", or "workspace:^" for a workspace package)`)
  }
  // What src/ imports by name must install with the package: a devDependency is absent for its users
  // (a type-only import too: it stays in the published .d.ts).
  const declared = new Set(['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((field) => Object.keys(pkg[field] ?? {})))
  for (const [path, specifier] of importsUnder(join(rootDir, dir, 'src'))) {
    const name = specifier
      .split('/')
      .slice(0, specifier.startsWith('@') ? 2 : 1)
      .join('/')
    if (name !== pkg.name && !declared.has(name)) fail(`${relative(rootDir, path)} imports "${specifier}", which is not in dependencies or peerDependencies`)
  }
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, range] of Object.entries(pkg[field] ?? {})) {
      if (/^(file|link|portal):/.test(range)) fail(`${field} "${name}": "${range}" does not install from a registry`)
    }
  }
}

/** `[file, specifier]` for every import of a package (not a relative path or a Node builtin) in .ts files under `dir`. */
function importsUnder(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return importsUnder(path)
    if (!name.endsWith('.ts')) return []
    const text = readFileSync(path, 'utf8')
    return [...text.matchAll(/^\s*(?:import|export)\s[^'";]*?\sfrom\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)]
      .map((match) => match[1] ?? match[2])
      .filter((specifier) => !specifier.startsWith('.') && !isBuiltin(specifier))
      .map((specifier) => [path, specifier])
  })
}

/** Every offence of the workspace at `rootDir`, in a stable order. */
export function checkPackages(rootDir) {
  const root = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8'))
  const offences = []
  for (const group of ['packages', 'plugins', 'examples']) {
    if (!existsSync(join(rootDir, group))) continue
    for (const name of readdirSync(join(rootDir, group)).sort()) check(rootDir, root, `${group}/${name}`, offences)
  }
  return offences
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const offences = checkPackages(resolve(process.argv[2] ?? '.'))
  if (offences.length) {
    console.error(`package.json metadata (CONTRIBUTING.md, "Versions and publishing"):\n${offences.join('\n')}`)
    process.exit(1)
  }
}
