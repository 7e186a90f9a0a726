import { existsSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { code, setupPaths, workspace } from './path-helpers.js'
import { textOf } from './helpers.js'

const { root, outside } = workspace()
const deny = [{ path: 'secret.txt', action: 'deny' as const, reason: 'secret.txt is off limits' }]

describe('path rules match the canonical real path, whatever the spelling', () => {
  it.each([
    ['the plain name', 'secret.txt'],
    ['a ./ prefix', './secret.txt'],
    ['a detour through ..', 'sub/../secret.txt'],
    ['repeated slashes and dots', 'sub//./..//secret.txt'],
    ['the absolute path', join(root, 'secret.txt')],
    ['a symlink alias', 'alias.txt'],
    ['a detour from outside the root', `../root/secret.txt`],
  ])('read denies %s', async (_how, path) => {
    const { ctx } = await setupPaths(root, deny)
    const result = await ctx.tools.execute({ name: 'read', arguments: { path } })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: secret.txt is off limits')
    expect(textOf(result.content)).not.toContain('TOP-SECRET')
  })

  it('lets other files through', async () => {
    const { ctx } = await setupPaths(root, deny)
    const result = await ctx.tools.execute({ name: 'read', arguments: { path: './public.txt' } })
    expect(result.isError === false && result.value).toEqual({ text: 'hello\n' })
  })

  it('argument matching by text is not a boundary: the same rule written as a `when` glob misses ./secret.txt', async () => {
    const { ctx } = await setupPaths(root, [{ tool: 'read', when: [{ pointer: '/path', glob: 'secret.txt' }], action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'secret.txt' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: './secret.txt' } }))).toBe('OK')
  })

  it('a symlink before .. is resolved the way the kernel does and the way fs does: both readings are checked', async () => {
    // hop → vault/inner: the kernel reads hop/../key.pem as vault/key.pem; a lexical tool as ./key.pem.
    const { ctx } = await setupPaths(root, [{ path: 'vault/**', action: 'deny' }])
    const result = await ctx.tools.execute({ name: 'read', arguments: { path: 'hop/../key.pem' } })
    expect(code(result)).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'vault/key.pem' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'public.txt' } }))).toBe('OK')
    // The other way round: a lexical tool (fs) reads hop/../secret.txt as ./secret.txt, the kernel as vault/secret.txt.
    const { ctx: lexical } = await setupPaths(root, deny)
    expect(code(await lexical.tools.execute({ name: 'read', arguments: { path: 'hop/../secret.txt' } }))).toBe('DENIED')
  })

  it('a wildcard rule denies a search of a directory that may hold a match, not a read of a file that cannot', async () => {
    const { ctx } = await setupPaths(root, [{ path: '**/*.pem', action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'public.txt' } }))).toBe('OK')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'vault/key.pem' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'x', path: 'sub' } }))).toBe('DENIED')
  })

  it('a rule on a directory covers what it holds', async () => {
    const { ctx } = await setupPaths(root, [{ path: 'vault', action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'vault/key.pem' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'hop/../key.pem' } }))).toBe('DENIED')
  })
})

describe('searches and other tools', () => {
  it('grep is denied where its search root holds the denied path (its default root included), allowed elsewhere', async () => {
    const { ctx } = await setupPaths(root, deny)
    expect(code(await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'SECRET' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'SECRET', path: '.' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'SECRET', path: 'alias.txt' } }))).toBe('DENIED')
    const sub = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'note', path: 'sub' } })
    expect(sub.isError === false && sub.value).toEqual({ matches: ['sub/note.txt'] })
  })

  it('access: write rules leave reads alone; a read rule also covers writes (a write can reveal the old content)', async () => {
    const { ctx } = await setupPaths(root, [
      { path: 'sub/**', access: 'write', action: 'deny' },
      { path: 'secret.txt', access: 'read', action: 'deny' },
    ])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'sub/note.txt' } }))).toBe('OK')
    expect(code(await ctx.tools.execute({ name: 'write', arguments: { path: 'sub/new.txt', content: 'x' } }))).toBe('DENIED')
    expect(existsSync(join(root, 'sub', 'new.txt'))).toBe(false)
    expect(code(await ctx.tools.execute({ name: 'write', arguments: { path: 'alias.txt', content: 'x' } }))).toBe('DENIED')
  })

  it('an allow must cover every path of the call, so allowing the source never allows the destination', async () => {
    const { ctx } = await setupPaths(root, [
      { path: 'sub/**', action: 'allow' },
      { tool: 'copy', action: 'deny', reason: 'outside sub' },
    ])
    expect(code(await ctx.tools.execute({ name: 'copy', arguments: { from: 'sub/note.txt', to: 'sub/copy.txt' } }))).toBe('OK')
    const escape = await ctx.tools.execute({ name: 'copy', arguments: { from: 'sub/note.txt', to: 'stolen.txt' } })
    expect(textOf(escape.content)).toBe('Error: outside sub')
    expect(existsSync(join(root, 'stolen.txt'))).toBe(false)
  })

  it('paths outside the root match absolute globs, through ../ and through a symlink alike', async () => {
    const { ctx } = await setupPaths(root, [{ path: `${outside}/**`, action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: '../outside/outside.txt' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'outlink/outside.txt' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'public.txt' } }))).toBe('OK')
  })

  it('a write through a dangling symlink is matched at the target it would create', async () => {
    const { ctx } = await setupPaths(root, [{ path: `${outside}/**`, access: 'write', action: 'deny' }])
    symlinkSync('../outside/planted.txt', join(root, 'dangling'))
    expect(code(await ctx.tools.execute({ name: 'write', arguments: { path: 'dangling', content: 'x' } }))).toBe('DENIED')
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)
  })

  it.each([
    ['a symlink loop', { path: 'loop/x' }, /too many levels of symbolic links/],
    ['a number', { path: 42 }, /the path argument \/path of loose is not a string/],
    ['a NUL byte', { path: 'secret.txt\u0000' }, /contains a NUL byte/],
  ])('fails closed on a path it cannot resolve (%s)', async (_what, args, message) => {
    const { ctx } = await setupPaths(root, deny)
    const result = await ctx.tools.execute({ name: 'loose', arguments: args })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toMatch(message)
  })

  it('a tool re-registered with path declarations is covered at once (no stale definition)', async () => {
    const { ctx } = await setupPaths(root, deny)
    const definition = {
      name: 'peek',
      description: 'd',
      parameters: { type: 'object' as const },
      output: { schema: { type: 'null' as const }, render: () => [] },
      execute: () => null,
    }
    const unregister = ctx.tools.register(definition)
    expect(code(await ctx.tools.execute({ name: 'peek', arguments: { path: 'secret.txt' } }))).toBe('OK')
    unregister()
    ctx.tools.register({ ...definition, paths: [{ pointer: '/path', access: 'read' }] })
    expect(code(await ctx.tools.execute({ name: 'peek', arguments: { path: 'secret.txt' } }))).toBe('DENIED')
  })

  it('a tool that declares no paths is not touched by path rules', async () => {
    const { ctx } = await setupPaths(root, [{ path: '**', action: 'deny' }])
    await ctx.plugin({
      name: 'plain',
      inject: ['tools'],
      apply: (inner) =>
        inner.tools.register({
          name: 'plain',
          description: 'd',
          parameters: { type: 'object' },
          output: { schema: { type: 'null' }, render: () => [] },
          execute: () => null,
        }),
    })
    expect(code(await ctx.tools.execute({ name: 'plain', arguments: { path: 'secret.txt' } }))).toBe('OK')
  })
})
