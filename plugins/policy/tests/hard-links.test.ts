import { linkSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { listenerCount } from '@cordage/registry'
import { code, setupPaths, workspace } from './path-helpers.js'
import { textOf } from './helpers.js'

const { root, outside } = workspace()
// Hard links: another name of the same file, which no path spelling or symlink resolution reveals.
linkSync(join(root, 'secret.txt'), join(root, 'sub', 'hard.txt'))
linkSync(join(root, 'public.txt'), join(root, 'sub', 'public-hard.txt'))
linkSync(join(outside, 'outside.txt'), join(root, 'sub', 'outside-hard.txt'))
const deny = [{ path: 'secret.txt', action: 'deny' as const, reason: 'secret.txt is off limits' }]

describe('a hard link to a file a concrete path rule names is that file', () => {
  it('read of another name of a denied file is denied, naming the rule', async () => {
    const { ctx } = await setupPaths(root, deny)
    const result = await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/hard.txt' } })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: secret.txt is off limits')
  })

  it('a write through another name is denied too, and a copy out of it', async () => {
    const { ctx } = await setupPaths(root, deny)
    expect(code(await ctx.tools.execute({ name: 'write', arguments: { path: 'sub/hard.txt', content: 'x' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'copy', arguments: { from: 'sub/hard.txt', to: 'sub/stolen.txt' } }))).toBe('DENIED')
  })

  it('absolute rules outside the root cover their hard links inside it', async () => {
    const { ctx } = await setupPaths(root, [{ path: join(outside, 'outside.txt'), action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/outside-hard.txt' } }))).toBe('DENIED')
  })

  it('an allow for the other name does not cover the denied file it is', async () => {
    const { ctx } = await setupPaths(root, [{ path: 'sub/**', action: 'allow' }, ...deny])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/hard.txt' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/public-hard.txt' } }))).toBe('OK')
  })

  it('other multiply-linked files pass; the file a rule names is looked up when a call is checked, not at load', async () => {
    const { ctx } = await setupPaths(root, deny)
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/public-hard.txt' } }))).toBe('OK')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/note.txt' } }))).toBe('OK')
    // secret.txt replaced by a new file (a new inode), then linked under another name.
    writeFileSync(join(root, 'secret.next'), 'NEW-SECRET\n')
    renameSync(join(root, 'secret.next'), join(root, 'secret.txt'))
    linkSync(join(root, 'secret.txt'), join(root, 'sub', 'now.txt'))
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/now.txt' } }))).toBe('DENIED')
  })

  it('unloading the policy removes its opened-file listener', async () => {
    const { ctx, fiber } = await setupPaths(root, deny)
    expect(listenerCount(ctx, 'paths/opened')).toBe(1)
    await fiber.dispose()
    expect(listenerCount(ctx, 'paths/opened')).toBe(0)
  })
})
