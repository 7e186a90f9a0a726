import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { ConfigError } from '@cordage/core'

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/**
 * Checks at load that the configured shell can be started: node-pty does not fail a spawn whose program
 * is missing (the child prints `execvp(3) failed` and exits 1), so a typo would otherwise surface only as
 * a dead session in every call.
 */
export function assertShell(shell: string, root: string): void {
  const found = shell.includes('/')
    ? executable(isAbsolute(shell) ? shell : resolve(root, shell))
    : (process.env.PATH ?? '').split(delimiter).some((dir) => dir && executable(join(dir, shell)))
  if (!found) throw new ConfigError('terminal', [{ path: 'shell', message: `"${shell}" is not an executable file${shell.includes('/') ? '' : ' on PATH'}` }])
}
