import { stat } from 'node:fs/promises'
import { fsFailure } from './errors.js'
import type { Workspace } from './paths.js'

/** A resolved search location: a directory (`cwd`) or a single file, and the display prefix of results under `cwd`. */
export interface SearchRoot {
  cwd: string | undefined
  file: string | undefined
  prefix: string
}

/** Resolves the optional `path` argument of glob/grep inside the workspace. */
export async function resolveSearchRoot(workspace: Workspace, path: string | undefined, allowFile: boolean): Promise<SearchRoot> {
  const target = await workspace.resolve(path ?? '.')
  let isDirectory: boolean
  try {
    isDirectory = (await stat(target.real)).isDirectory()
  } catch (error) {
    throw fsFailure(error, target.display)
  }
  if (!isDirectory) return { cwd: undefined, file: allowFile ? target.real : undefined, prefix: '' }
  return { cwd: target.real, file: undefined, prefix: target.display === '.' ? '' : `${target.display}/` }
}
