import { link, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Policy from '@cordage/plugin-policy'
import { codeOf, loadFs, tempDir, textOf, valueOf, writeTree } from './helpers.js'

const deny = [{ path: 'secret.txt', action: 'deny' as const, reason: 'secret.txt is off limits' }]

/** root: secret.txt, public.txt, sub/hard.txt (secret.txt's other name), sub/public-hard.txt, sub/note.txt. */
async function setup(search: 'node' | 'ripgrep' = 'ripgrep') {
  const root = await tempDir()
  await writeTree(root, { 'secret.txt': 'TOP-SECRET token\n', 'public.txt': 'public token\n', 'sub/note.txt': 'a note token\n' })
  await link(join(root, 'secret.txt'), join(root, 'sub', 'hard.txt'))
  await link(join(root, 'public.txt'), join(root, 'sub', 'public-hard.txt'))
  const loaded = await loadFs(root, { search, requireReadBeforeWrite: false })
  await loaded.ctx.plugin(Policy, { root, rules: deny })
  return { root, ...loaded }
}

describe('another name (a hard link) of a file a path rule denies', () => {
  it.each(['node', 'ripgrep'] as const)('grep (%s) over a directory holding one is refused with DENIED, naming what it opened', async (search) => {
    const { call } = await setup(search)
    // The search root sub/ holds no path the rule names, so the check before the call lets it run.
    const result = await call('grep', { pattern: 'token', path: 'sub' })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result)).toBe('Error: secret.txt is off limits (the call opened sub/hard.txt, which is also secret.txt (a hard link))')
    expect(textOf(result)).not.toContain('TOP-SECRET')
    expect(valueOf(await call('grep', { pattern: 'note token', path: 'sub' })).matches).toEqual([{ path: 'sub/note.txt', lineNumber: 1, line: 'a note token' }])
  })

  it('read, write and edit of it are denied and leave the file as it was; other multiply-linked files work', async () => {
    const { root, call } = await setup()
    expect(codeOf(await call('read', { path: 'sub/hard.txt' }))).toBe('DENIED')
    expect(codeOf(await call('write', { path: 'sub/hard.txt', content: 'gone\n' }))).toBe('DENIED')
    expect(codeOf(await call('edit', { path: 'sub/hard.txt', old_string: 'TOP', new_string: 'NO' }))).toBe('DENIED')
    expect(await readFile(join(root, 'secret.txt'), 'utf8')).toBe('TOP-SECRET token\n')
    expect(valueOf(await call('read', { path: 'sub/public-hard.txt' })).lines).toEqual([{ number: 1, text: 'public token' }])
    expect((await call('edit', { path: 'sub/public-hard.txt', old_string: 'public', new_string: 'shared' })).isError).toBe(false)
  })
})
