import type { OpenedFile } from '@cordage/services'
import { handlePath, openContained, openedFile } from './contained.js'
import { FsError, fsFailure } from './errors.js'
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

/** Opens the optional `path` argument of glob/grep inside the workspace and shows it to `admit`; the caller closes it. */
export async function resolveSearchRoot(
  workspace: Workspace,
  path: string | undefined,
  allowFile: boolean,
  admit: (file: OpenedFile) => void,
): Promise<SearchRoot> {
  const target = await workspace.resolve(path ?? '.')
  let handle
  let isDirectory: boolean
  try {
    handle = await openContained(workspace, target.real, target.display)
    const stats = await handle.stat({ bigint: true })
    isDirectory = stats.isDirectory()
    // A FIFO or device (/dev/zero) would block the search or never end it.
    if (!isDirectory && !stats.isFile()) throw new FsError('NOT_FOUND', `${target.display} is not a regular file or a directory`)
    admit(openedFile(handle, target.real, stats))
  } catch (error) {
    await handle?.close()
    throw fsFailure(error, target.display)
  }
  const at = handlePath(handle, target.real)
  const close = () => handle.close()
  if (!isDirectory) return { cwd: undefined, file: allowFile ? at : undefined, real: target.real, prefix: '', close }
  return { cwd: at, file: undefined, real: target.real, prefix: target.display === '.' ? '' : `${target.display}/`, close }
}
