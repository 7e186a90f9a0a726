import { randomBytes } from 'node:crypto'
import { open, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/**
 * Writes `data` to `path` atomically: a temporary file in the same directory is written, fsynced, given
 * the old file's mode (or `0o666` minus the umask for new files) and renamed over the target. A crash
 * or a failure at any point leaves the old file intact (a killed process may leave the temporary file).
 */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  let mode: number | undefined
  try {
    mode = (await stat(path)).mode & 0o7777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(temp, 'wx', mode ?? 0o666)
  let renamed = false
  try {
    await handle.writeFile(data)
    // `open` applies the umask: set the old mode explicitly so the rename does not change permissions.
    if (mode !== undefined) await handle.chmod(mode)
    await handle.sync()
    await handle.close()
    await rename(temp, path)
    renamed = true
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {})
      await unlink(temp).catch(() => {})
    }
  }
}
