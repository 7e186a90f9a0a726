import { realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { handlePath, openContained } from './contained.js'
import { fsFailure } from './errors.js'
import type { Workspace } from './paths.js'

/**
 * A resolved, opened search location: a directory or a single file. `cwd`/`file` name the verified
 * descriptor (searches run there even if the tree is swapped meanwhile); `real` is its real path.
 */
export interface SearchRoot {
  cwd: string | undefined
  file: string | undefined
  real: string
  /** Display prefix of results under `cwd`. */
  prefix: string
  close(): Promise<void>
}

/** Opens the optional `path` argument of glob/grep inside the workspace; the caller closes it. */
export async function resolveSearchRoot(workspace: Workspace, path: string | undefined, allowFile: boolean): Promise<SearchRoot> {
  const target = await workspace.resolve(path ?? '.')
  let handle
  let isDirectory: boolean
  try {
    handle = await openContained(workspace, target.real, target.display)
    isDirectory = (await handle.stat()).isDirectory()
  } catch (error) {
    await handle?.close()
    throw fsFailure(error, target.display)
  }
  const at = handlePath(handle, target.real)
  const close = () => handle.close()
  if (!isDirectory) return { cwd: undefined, file: allowFile ? at : undefined, real: target.real, prefix: '', close }
  return { cwd: at, file: undefined, real: target.real, prefix: target.display === '.' ? '' : `${target.display}/`, close }
}

/**
 * Keeps the listed paths (relative to the open directory `cwd`) that are, at the time of the check, real
 * files inside the root. A walker that opens directories by name can be sent outside by a directory
 * swapped for a symlink mid-walk; what it found there does not resolve back to the same place inside.
 */
export async function keepContained(workspace: Workspace, cwd: string, paths: readonly string[]): Promise<Set<string>> {
  const kept = new Set<string>()
  if (workspace.allowOutsideRoot) return new Set(paths)
  const base = await realpath(cwd)
  if (!workspace.contains(base)) return kept
  for (let start = 0; start < paths.length; start += 256) {
    await Promise.all(paths.slice(start, start + 256).map(async (path) => {
      const expected = join(base, path)
      const resolved = await realpath(join(cwd, path)).catch(() => undefined)
      if (resolved === expected && workspace.contains(resolved)) kept.add(path)
    }))
  }
  return kept
}
