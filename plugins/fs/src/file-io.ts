import { isUtf8 } from 'node:buffer'
import type { FileHandle } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { writeFileAtomic } from './atomic.js'
import type { ToolExec } from '@cordage/core'
import { handlePath, openContained, openDirectory, openedFile } from './contained.js'
import { FsError, fsFailure } from './errors.js'
import type { ResolvedPath } from './paths.js'
import type { FsRuntime } from './runtime.js'

/** The current text of an existing file and the mode its replacement keeps. */
export interface Current {
  text: string
  mode: number
}

/**
 * Reads the current text of an existing file for write/edit through a verified descriptor, after the
 * read-before-write check: refuses directories, oversized, binary and non-UTF-8 files (their bytes could
 * not survive a round trip through text).
 */
export async function readForChange(runtime: FsRuntime, target: ResolvedPath, exec: ToolExec): Promise<Current> {
  const { workspace, tracker, settings } = runtime
  let handle: FileHandle | undefined
  try {
    handle = await openContained(workspace, target.real, target.display)
    const stats = await handle.stat({ bigint: true })
    tracker.check(target.real, target.display, stats)
    if (stats.isDirectory()) throw new FsError('IS_DIRECTORY', `${target.display} is a directory; write and edit change files only`)
    if (!stats.isFile()) throw new FsError('NOT_FOUND', `${target.display} is not a regular file; write and edit change regular files only`)
    runtime.admit(exec, openedFile(handle, target.real, stats), 'write')
    if (stats.size > settings.maxEditBytes)
      throw new FsError(
        'FILE_TOO_LARGE',
        `${target.display} has ${stats.size} bytes, more than the ${settings.maxEditBytes} bytes write and edit handle; change it with bash (e.g. sed) instead`,
      )
    const data = await handle.readFile()
    if (data.subarray(0, 8000).includes(0)) throw new FsError('BINARY_FILE', `${target.display} is a binary file; write and edit change text files only`)
    if (!isUtf8(data)) {
      const at = firstInvalidUtf8(data)
      const line = data.subarray(0, at).reduce((count, byte) => count + (byte === 10 ? 1 : 0), 1)
      throw new FsError(
        'NOT_TEXT',
        `${target.display} is not UTF-8 text (byte 0x${data[at]!.toString(16).padStart(2, '0')} on line ${line} is not valid UTF-8; it may be Latin-1 or another encoding), so write and edit leave it unchanged; convert or change it with bash (e.g. iconv, sed) instead`,
      )
    }
    return { text: data.toString('utf8'), mode: Number(stats.mode & 0o7777n) }
  } catch (error) {
    throw fsFailure(error, target.display)
  } finally {
    await handle?.close()
  }
}

/** Publishes `text` at `target` atomically inside its verified parent directory (created when missing) and records it as seen. */
export async function publish(runtime: FsRuntime, target: ResolvedPath, text: string, mode: number | undefined): Promise<void> {
  try {
    const dir = await openDirectory(runtime.workspace, dirname(target.real), target.display)
    try {
      const stats = await writeFileAtomic(handlePath(dir, dirname(target.real)), basename(target.real), text, mode)
      await runtime.tracker.remember(target.real, stats)
    } finally {
      await dir.close()
    }
  } catch (error) {
    throw fsFailure(error, target.display)
  }
}

/** Byte offset of the first byte that does not start or continue a valid UTF-8 sequence. */
export function firstInvalidUtf8(data: Uint8Array): number {
  for (let index = 0; index < data.length;) {
    const byte = data[index]!
    const length = byte < 0x80 ? 1 : byte >= 0xc2 && byte < 0xe0 ? 2 : byte >= 0xe0 && byte < 0xf0 ? 3 : byte >= 0xf0 && byte < 0xf5 ? 4 : 0
    if (length === 0) return index
    const end = index + length
    if (end > data.length) return index
    for (let next = index + 1; next < end; next++) if ((data[next]! & 0xc0) !== 0x80) return index
    // Overlong three/four-byte forms, surrogates and code points above U+10FFFF.
    const second = data[index + 1]!
    if ((byte === 0xe0 && second < 0xa0) || (byte === 0xed && second > 0x9f) || (byte === 0xf0 && second < 0x90) || (byte === 0xf4 && second > 0x8f))
      return index
    index = end
  }
  return data.length
}
