import { randomBytes } from 'node:crypto'
import { constants, type BigIntStats } from 'node:fs'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants

/**
 * Writes `data` as `name` in the open directory `dir` (`dirPath` names that descriptor, see `handlePath`)
 * atomically: a temporary file in that directory is written, fsynced, given `mode` (or `0o666` minus the
 * umask for new files) and renamed over `name`. Both the temporary file and the rename go through the
 * directory's descriptor, so they land in the directory that was verified, whatever was swapped since.
 * A failure leaves the old file intact (a killed process may leave the temporary file). Returns the new
 * file's stats, taken before the rename publishes it.
 */
export async function writeFileAtomic(dirPath: string, name: string, data: string | Buffer, mode?: number): Promise<BigIntStats> {
  const temp = join(dirPath, `.${name}.${randomBytes(6).toString('hex')}.tmp`)
  const handle: FileHandle = await open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode ?? 0o666)
  let renamed = false
  try {
    await handle.writeFile(data)
    // `open` applies the umask: set the old mode explicitly so the rename does not change permissions.
    if (mode !== undefined) await handle.chmod(mode)
    await handle.sync()
    const stats = await handle.stat({ bigint: true })
    await handle.close()
    await rename(temp, join(dirPath, name))
    renamed = true
    return stats
  } finally {
    if (!renamed) {
      await handle.close().catch(() => {})
      await unlink(temp).catch(() => {})
    }
  }
}
