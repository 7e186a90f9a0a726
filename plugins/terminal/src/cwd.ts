import { realpathSync, statSync } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { ConfigError } from '@cordage/core'
import { TerminalCwdError } from './errors.js'

/** Resolves the configured workspace root to a real directory; throws at load when it is not one. */
export function workspaceRoot(configured: string | undefined): string {
  const root = resolve(configured ?? process.cwd())
  try {
    const real = realpathSync(root)
    if (statSync(real).isDirectory()) return real
  } catch {}
  throw new ConfigError('terminal', [{ path: 'root', message: `${root} is not an existing directory` }])
}

/**
 * The session's working directory: `requested` resolved against the root with symlinks followed, so an
 * alias (`link -> /etc`, `a/../..`) cannot leave the workspace. Missing, non-directory or outside → INVALID_CWD.
 */
export async function sessionCwd(root: string, requested: string | undefined): Promise<string> {
  if (!requested) return root
  const target = resolve(root, requested)
  const real = await realpath(target).catch(() => {
    throw new TerminalCwdError(`cwd "${requested}" does not exist (resolved to ${target}); pass a directory inside ${root}`)
  })
  const path = relative(root, real)
  if (path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path)) {
    throw new TerminalCwdError(`cwd "${requested}" resolves to ${real}, outside the workspace root ${root}; use a directory inside the root`)
  }
  if (!(await stat(real)).isDirectory()) throw new TerminalCwdError(`cwd "${requested}" is not a directory (${real})`)
  return real
}
