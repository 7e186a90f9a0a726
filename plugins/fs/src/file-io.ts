import { readFile, stat } from 'node:fs/promises'
import { FsError, fsFailure } from './errors.js'
import type { ResolvedPath } from './paths.js'

/** Reads the current text of an existing file for write/edit: refuses directories, binary and oversized files. */
export async function readForChange(target: ResolvedPath, maxBytes: number): Promise<string> {
  try {
    const stats = await stat(target.real)
    if (stats.isDirectory()) throw new FsError('IS_DIRECTORY', `${target.display} is a directory; write and edit change files only`)
    if (stats.size > maxBytes) throw new FsError('FILE_TOO_LARGE', `${target.display} has ${stats.size} bytes, more than the ${maxBytes} bytes write and edit handle; change it with bash (e.g. sed) instead`)
    const data = await readFile(target.real)
    if (data.subarray(0, 8000).includes(0)) throw new FsError('BINARY_FILE', `${target.display} is a binary file; write and edit change text files only`)
    return data.toString('utf8')
  } catch (error) {
    throw fsFailure(error, target.display)
  }
}
