import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, isAbsolute } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Plugin } from 'cordis'
import { CordisToolError } from './errors.js'
import { errorMessage } from '@cordage/core'

const PACKAGE_NAME = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i
const CONDITIONS = ['import', 'node', 'default']

/** The target of a package's `exports` for the root entry, under the import conditions. */
function exported(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports
  if (Array.isArray(exports)) {
    for (const candidate of exports) {
      const target = exported(candidate)
      if (target !== undefined) return target
    }
    return undefined
  }
  if (!exports || typeof exports !== 'object') return undefined
  const map = exports as Record<string, unknown>
  if (Object.keys(map).some((key) => key.startsWith('.'))) return map['.'] === undefined ? undefined : exported(map['.'])
  for (const [condition, target] of Object.entries(map)) if (CONDITIONS.includes(condition)) return exported(target)
  return undefined
}

/** A file, or the file a CommonJS-style `main` names without its extension or as a directory. */
function existingFile(path: string): string | undefined {
  for (const candidate of [path, `${path}.js`, `${path}.mjs`, join(path, 'index.js')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate
  }
  return undefined
}

/**
 * Finds an installed package from `cwd` the way Node looks in `node_modules` directories (this one and
 * each parent), and only there: `NODE_PATH` and global folders are not consulted. Returns the entry
 * file its `exports` (or `main`) names, which must stay inside the package.
 */
export function locatePackage(name: string, cwd: string): string {
  if (!PACKAGE_NAME.test(name)) throw new CordisToolError('MOUNT_FAILED', `"${name}" is not a package name`)
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name)
    const manifest = join(root, 'package.json')
    if (existsSync(manifest)) {
      let pkg: { exports?: unknown; main?: unknown }
      try {
        pkg = JSON.parse(readFileSync(manifest, 'utf8'))
      } catch (error) {
        throw new CordisToolError('MOUNT_FAILED', `package "${name}" has an unreadable package.json: ${errorMessage(error)}`)
      }
      const target = pkg.exports !== undefined ? exported(pkg.exports) : typeof pkg.main === 'string' ? pkg.main : 'index.js'
      if (target === undefined) throw new CordisToolError('MOUNT_FAILED', `package "${name}" exports no entry for import`)
      const entry = existingFile(resolve(root, target))
      const inside = entry !== undefined && !relative(root, entry).startsWith('..') && !isAbsolute(relative(root, entry))
      if (!entry || !inside) throw new CordisToolError('MOUNT_FAILED', `package "${name}": its entry ${target} is missing or outside the package`)
      return entry
    }
    if (dirname(dir) === dir) break
  }
  throw new CordisToolError('MOUNT_FAILED', `package "${name}" is not installed in ${resolve(cwd)} or a parent's node_modules`)
}

/** Imports an installed package (a real dynamic `import()` in the host) and returns the Cordis plugin it exports. */
export async function importPackage(name: string, cwd: string): Promise<Plugin> {
  const entry = locatePackage(name, cwd)
  let module: Record<string, unknown>
  try {
    module = (await import(pathToFileURL(entry).href)) as Record<string, unknown>
  } catch (error) {
    throw new CordisToolError('MOUNT_FAILED', `package "${name}" failed to import: ${errorMessage(error)}`)
  }
  for (const candidate of [module.default, module]) {
    if (typeof candidate === 'function') return candidate as Plugin
    if (candidate && typeof candidate === 'object' && typeof (candidate as { apply?: unknown }).apply === 'function') return candidate as Plugin
  }
  throw new CordisToolError('MOUNT_NOT_A_PLUGIN', `package "${name}" exports no Cordis plugin (a default export or a module with apply)`)
}
