import { constants, fstatSync, readlinkSync, realpathSync, statSync, type BigIntStats } from 'node:fs'
import { mkdir, open, type FileHandle } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { OpenedFile } from '@cordage/services'
import { FsError } from './errors.js'
import type { Workspace } from './paths.js'
import { errorMessage } from '@cordage/core'

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants
// `/proc/<pid>/fd/<n>` names an open descriptor itself: our process and our children (rg's cwd) see the file
// that was opened and verified, whatever was renamed or swapped in the tree since.
// Only when `/proc` is this process's PID namespace: `/proc/self` then names our own PID.
const PROC = process.platform === 'linux' && ownProc()

function ownProc(): boolean {
  try {
    return readlinkSync('/proc/self') === String(process.pid)
  } catch {
    return false
  }
}

/** A path naming the open file or directory itself (its real path where `/proc` is missing). */
export function handlePath(handle: FileHandle, real: string): string {
  return fdPath(handle.fd, real)
}

/** `handlePath` for a numeric descriptor. */
export function fdPath(fd: number, real: string): string {
  return PROC ? `/proc/${process.pid}/fd/${fd}` : real
}

/** Where an open descriptor actually is: read from `/proc`, or (elsewhere) `path`'s real path if it still names the same file. */
export function openedPath(fd: number, path: string): string {
  if (PROC) return readlinkSync(`/proc/${process.pid}/fd/${fd}`).replace(/ \(deleted\)$/, '')
  const real = realpathSync(path)
  const [opened, named] = [fstatSync(fd), statSync(real)]
  return opened.dev === named.dev && opened.ino === named.ino ? real : `(a file other than ${path})`
}

// Where each verified descriptor was found to be, for `openedFile`.
const openedAt = new WeakMap<FileHandle, string>()

/** What an open descriptor is, for path rules (`paths/opened`): where it actually is, and which inode (`stats` of it). */
export function openedFile(handle: FileHandle, real: string, stats: BigIntStats): OpenedFile {
  let at = openedAt.get(handle)
  if (at === undefined) {
    try {
      at = openedPath(handle.fd, real)
    } catch {
      at = real
    }
  }
  return { real: at, dev: stats.dev, ino: stats.ino, nlink: stats.nlink, directory: stats.isDirectory() }
}

/** Throws `PATH_OUTSIDE_ROOT` unless the open descriptor lies inside the root; closes it when it does not. */
async function verify(workspace: Workspace, handle: FileHandle, real: string, display: string): Promise<void> {
  if (workspace.allowOutsideRoot) return
  let opened: string
  try {
    opened = openedPath(handle.fd, real)
  } catch (error) {
    opened = `(unknown: ${errorMessage(error)})`
  }
  if (workspace.contains(opened)) return void openedAt.set(handle, opened)
  await handle.close()
  throw new FsError(
    'PATH_OUTSIDE_ROOT',
    `${display} changed while it was being opened and led to ${opened}, outside the workspace root ${workspace.root}; only paths inside the root are allowed`,
  )
}

function raced(error: unknown, display: string): unknown {
  // O_NOFOLLOW on a real (symlink-free) path: the last component was replaced by a symlink after resolving.
  if ((error as NodeJS.ErrnoException).code !== 'ELOOP') return error
  return new FsError('PATH_OUTSIDE_ROOT', `${display} was replaced by a symbolic link while it was being opened; try again`, { cause: error })
}

/**
 * Opens the real path `real` for reading without following a final symlink and without blocking on a
 * FIFO, then checks where the descriptor actually is: a directory swapped for a symlink between resolving
 * and opening is caught here, before anything is read.
 */
export async function openContained(workspace: Workspace, real: string, display: string, flags = 0): Promise<FileHandle> {
  let handle: FileHandle
  try {
    handle = await open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | flags)
  } catch (error) {
    throw raced(error, display)
  }
  await verify(workspace, handle, real, display)
  return handle
}

/**
 * Opens the directory `dir` (a real path) to publish into, creating missing directories one component at
 * a time under the nearest existing, verified ancestor: each is made and opened through the parent's
 * descriptor without following symlinks, so no directory is ever created outside the root.
 */
export async function openDirectory(workspace: Workspace, dir: string, display: string): Promise<FileHandle> {
  const missing: string[] = []
  let current = dir
  let handle: FileHandle
  for (;;) {
    try {
      handle = await openContained(workspace, current, display, O_DIRECTORY)
      break
    } catch (error) {
      const parent = dirname(current)
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === current) throw error
      missing.unshift(basename(current))
      current = parent
    }
  }
  for (const name of missing) {
    const at = join(handlePath(handle, current), name)
    current = join(current, name)
    try {
      await mkdir(at).catch((error) => {
        if (error.code !== 'EEXIST') throw error
      })
      const next = await open(at, O_RDONLY | O_NOFOLLOW | O_DIRECTORY)
      await handle.close()
      handle = next
    } catch (error) {
      await handle.close()
      throw raced(error, display)
    }
  }
  return handle
}
