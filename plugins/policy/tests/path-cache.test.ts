import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync, linkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { code, setupPaths, workspace } from './path-helpers.js'

const { root } = workspace()
const deny = [
  { path: 'secret.txt', action: 'deny' as const, reason: 'secret.txt is off limits' },
  { path: 'vault/**', action: 'deny' as const, reason: 'the vault is off limits' },
]

/** inotify watches this process holds, from /proc (what the policy's resolution cache watches). */
function inotifyWatches(): number {
  let count = 0
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      count += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('inotify wd:')).length
    } catch {
      // Closed meanwhile.
    }
  }
  return count
}

describe('resolutions are cached until the file system changes where they looked', () => {
  it('a symlink retargeted after a call is judged at its new target', async () => {
    symlinkSync('public.txt', join(root, 'moving.txt'))
    const { ctx, fiber } = await setupPaths(root, deny)
    const read = async () => code(await ctx.tools.execute({ name: 'read', arguments: { path: 'moving.txt' } }))
    expect(await read()).toBe('OK')
    rmSync(join(root, 'moving.txt'))
    symlinkSync('secret.txt', join(root, 'moving.txt'))
    // The change is seen once its event is delivered (the next turn of the event loop).
    await expect.poll(read, { timeout: 10_000 }).toBe('DENIED')
    await fiber.dispose()
  })

  it('a file replaced by a hard link of a denied file, and a directory replaced by a link into the vault, are seen', async () => {
    writeFileSync(join(root, 'plain.txt'), 'plain\n')
    mkdirSync(join(root, 'box'))
    writeFileSync(join(root, 'box', 'key.pem'), 'not a key\n')
    const { ctx, fiber } = await setupPaths(root, deny)
    const read = async (path: string) => code(await ctx.tools.execute({ name: 'read', arguments: { path } }))
    expect(await read('plain.txt')).toBe('OK')
    expect(await read('box/key.pem')).toBe('OK')
    linkSync(join(root, 'secret.txt'), join(root, 'plain.next'))
    renameSync(join(root, 'plain.next'), join(root, 'plain.txt'))
    renameSync(join(root, 'box'), join(root, 'old-box'))
    symlinkSync('vault', join(root, 'box'))
    await expect.poll(() => read('plain.txt'), { timeout: 10_000 }).toBe('DENIED')
    await expect.poll(() => read('box/key.pem'), { timeout: 10_000 }).toBe('DENIED')
    await fiber.dispose()
  })

  it('watches only while loaded: unloading the policy removes every watch', async () => {
    const before = inotifyWatches()
    const { ctx, fiber } = await setupPaths(root, deny)
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/note.txt' } }))).toBe('OK')
    expect(inotifyWatches()).toBeGreaterThan(before)
    await fiber.dispose()
    expect(inotifyWatches()).toBe(before)
  })
})
