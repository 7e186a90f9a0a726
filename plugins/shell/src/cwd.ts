import { realpathSync, statSync } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { ConfigError } from '@cordage/core'
import { ShellCwdError } from './errors.js'

/** True when `target` is `root` or inside it (both already real paths). */
export function isInside(root: string, target: string): boolean {
  const path = relative(root, target)
  return path === '' || (path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path))
}

/**
 * Resolves a command's working directory against the (real) workspace root, following symlinks:
 * missing directories, files and anything outside the root are `INVALID_CWD` failures.
 */
export async function resolveCwd(root: string, requested: string | undefined): Promise<string> {
  if (requested === undefined || requested === '') return root
  const target = resolve(root, requested)
  let real: string
  try {
    real = await realpath(target)
  } catch {
    throw new ShellCwdError(`cwd "${requested}" does not exist (resolved to ${target}); pass a directory inside ${root}`)
  }
  if (!isInside(root, real)) {
    throw new ShellCwdError(`cwd "${requested}" resolves to ${real}, outside the workspace root ${root}; use a directory inside the root`)
  }
  if (!(await stat(real)).isDirectory()) throw new ShellCwdError(`cwd "${requested}" is not a directory (${real})`)
  return real
}

/** Resolves the configured workspace root to a real directory; throws (at load) when it is not one. */
export function resolveRoot(configured: string | undefined): string {
  const root = resolve(configured ?? process.cwd())
  let real: string
  try {
    real = realpathSync(root)
  } catch {
    throw new ConfigError('shell', [{ path: '', message: `config.root ${root} does not exist` }])
  }
  if (!statSync(real).isDirectory()) throw new ConfigError('shell', [{ path: '', message: `config.root ${real} is not a directory` }])
  return real
}
