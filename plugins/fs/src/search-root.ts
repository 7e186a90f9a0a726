import { join } from 'node:path'
import { handlePath, O_PATH, openContained } from './contained.js'
import { fsFailure } from './errors.js'
import { readLines } from './lines.js'
import type { Workspace } from './paths.js'
import type { FoundMatch } from './search.js'

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
 * Keeps the listed paths (relative to the open directory `cwd`) that name files inside the root at the
 * time of the check. A walker that opens directories by name can be sent outside by a directory swapped
 * for a symlink mid-walk (and so can `realpath`, component by component): each path is opened and the
 * descriptor's location checked instead.
 */
export async function keepContained(workspace: Workspace, cwd: string, paths: readonly string[]): Promise<Set<string>> {
  if (workspace.allowOutsideRoot) return new Set(paths)
  const kept = new Set<string>()
  for (let start = 0; start < paths.length; start += 64) {
    await Promise.all(paths.slice(start, start + 64).map(async (path) => {
      const handle = await openContained(workspace, join(cwd, path), path, O_PATH).catch(() => undefined)
      if (!handle) return
      kept.add(path)
      await handle.close()
    }))
  }
  return kept
}

/**
 * Keeps the matches whose lines (and context lines) are, at the time of the check, the lines of a file
 * inside the root: each file with matches is opened and verified like a read, and the reported lines are
 * compared with what it holds. Content a walker read through a swapped directory is dropped even when an
 * inside file has the same name; so is a line that changed since the search.
 */
export async function keepVerifiedMatches<T extends FoundMatch>(workspace: Workspace, cwd: string, matches: readonly T[], maxLineLength: number): Promise<T[]> {
  if (workspace.allowOutsideRoot) return [...matches]
  const byFile = new Map<string, T[]>()
  for (const match of matches) {
    const found = byFile.get(match.path)
    if (found) found.push(match)
    else byFile.set(match.path, [match])
  }
  const verified = new Set<T>()
  const files = [...byFile]
  for (let start = 0; start < files.length; start += 32) {
    await Promise.all(files.slice(start, start + 32).map(async ([path, found]) => {
      const wanted = new Map<number, string>()
      for (const match of found) for (const line of [match, ...match.before ?? [], ...match.after ?? []]) wanted.set(line.lineNumber, line.line)
      const actual = await linesOf(workspace, join(cwd, path), new Set(wanted.keys()), maxLineLength)
      if (!actual) return
      const same = (number: number) => actual.get(number)?.slice(0, maxLineLength) === wanted.get(number)!.slice(0, maxLineLength)
      for (const match of found) {
        if ([match, ...match.before ?? [], ...match.after ?? []].every((line) => same(line.lineNumber))) verified.add(match)
      }
    }))
  }
  return matches.filter((match) => verified.has(match))
}

async function linesOf(workspace: Workspace, path: string, only: Set<number>, maxLineLength: number): Promise<Map<number, string> | undefined> {
  let handle
  try {
    handle = await openContained(workspace, path, path)
    const window = await readLines(handle, { offset: 1, limit: only.size, maxBytes: Infinity, maxLineLength, only })
    return window.binary ? undefined : new Map(window.lines.map((line) => [line.number, line.text]))
  } catch {
    return undefined
  } finally {
    await handle?.close()
  }
}
