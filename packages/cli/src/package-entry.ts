import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs'
import { dirname, join, resolve, sep } from 'node:path'
import { errorMessage } from '@cordage/core'

/**
 * Finds installed packages and the module their `package.json` names, the way `import` does, without
 * CommonJS's resolver: that one also searches `NODE_PATH` (which pnpm's bin shims fill with the whole
 * store) and global folders, so what loaded would depend on how the command was started.
 */

// What `import` matches in `exports`, plus any condition this process was started with (`--conditions`).
function importConditions(): Set<string> {
  const conditions = new Set(['node', 'import', 'default'])
  const argv = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  argv.forEach((argument, index) => {
    const inline = /^(?:--conditions|-C)=(.+)$/.exec(argument)
    if (inline) conditions.add(inline[1]!)
    else if ((argument === '--conditions' || argument === '-C') && argv[index + 1]) conditions.add(argv[index + 1]!)
  })
  return conditions
}

/** `@scope/name/sub/path` → `['@scope/name', './sub/path']`; a bare package name's subpath is `'.'`. */
function splitSpecifier(specifier: string): [name: string, subpath: string] {
  const parts = specifier.split('/')
  const length = specifier.startsWith('@') ? 2 : 1
  const rest = parts.slice(length).join('/')
  return [parts.slice(0, length).join('/'), rest ? `./${rest}` : '.']
}

/** The first target a condition map (or fallback array) selects for `conditions`. */
function selectTarget(value: unknown, conditions: Set<string>): string | undefined {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = selectTarget(item, conditions)
      if (target !== undefined) return target
    }
    return undefined
  }
  if (!value || typeof value !== 'object') return undefined
  for (const [condition, nested] of Object.entries(value)) {
    if (!conditions.has(condition)) continue
    const target = selectTarget(nested, conditions)
    if (target !== undefined) return target
  }
  return undefined
}

/** What `exports` maps `subpath` to: an exact key, else a `*` pattern (its match substituted into the target). */
function exportTarget(exports: unknown, subpath: string, conditions: Set<string>): string | undefined {
  const isSubpathMap = !!exports && typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((key) => key.startsWith('.'))
  if (!isSubpathMap) return subpath === '.' ? selectTarget(exports, conditions) : undefined
  const map = exports as Record<string, unknown>
  if (Object.hasOwn(map, subpath)) return selectTarget(map[subpath], conditions)
  for (const [key, value] of Object.entries(map)) {
    const star = key.indexOf('*')
    if (star < 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (subpath.length < key.length - 1 || !subpath.startsWith(prefix) || !subpath.endsWith(suffix)) continue
    const match = subpath.slice(prefix.length, subpath.length - suffix.length)
    return selectTarget(value, conditions)?.replaceAll('*', match)
  }
  return undefined
}

/** A package's entry file, or why it has none (said in the "cannot load" message). */
export type PackageEntry = { file: string; problem?: undefined } | { file?: undefined; problem: string }

/**
 * The file package directory `dir` loads for `subpath` (`'.'` for the package itself): through
 * `exports` when it has one, else `main`, else `index.js`.
 */
export function packageEntry(dir: string, subpath = '.'): PackageEntry {
  let manifest: { exports?: unknown; main?: unknown }
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  } catch (error) {
    return { problem: `${join(dir, 'package.json')} is not readable JSON (${errorMessage(error)})` }
  }
  let target: string | undefined
  if (manifest.exports !== undefined) {
    target = exportTarget(manifest.exports, subpath, importConditions())
    if (target === undefined) return { problem: `${dir}: its package.json "exports" has no entry for "${subpath}" under the conditions node, import, default` }
    // Node accepts only targets inside the package: `./…` with no `..` segment.
    if (!target.startsWith('./') || target.split(/[/\\]/).includes('..'))
      return { problem: `${dir}: its package.json "exports" points outside the package (${target})` }
  } else {
    target = subpath === '.' ? (typeof manifest.main === 'string' ? manifest.main : 'index.js') : subpath
  }
  const file = resolve(dir, target)
  if (!(file + sep).startsWith(resolve(dir) + sep)) return { problem: `${dir}: its entry ${target} is outside the package` }
  if (!existsSync(file) || statSync(file).isDirectory()) return { problem: `${dir}: its entry ${target} does not exist (is the package built?)` }
  return { file: realpathSync(file) }
}

/** The entry of package `specifier` installed in a `node_modules` folder at or above `fromDir`; undefined when none is installed. */
export function installedEntry(specifier: string, fromDir: string): PackageEntry | undefined {
  const [name, subpath] = splitSpecifier(specifier)
  for (let dir = resolve(fromDir); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return packageEntry(candidate, subpath)
    if (dirname(dir) === dir) return undefined
  }
}
