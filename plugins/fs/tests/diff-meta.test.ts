import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadFs, tempDir, valueOf } from './helpers.js'

const lines = (count: number, tag: string) => Array.from({ length: count }, (_, i) => `line ${i} ${tag} ${'x'.repeat(60)}`).join('\n') + '\n'
type DiffMeta = { diff: string; additions: number; deletions: number; truncated?: boolean; minimal?: boolean; operation: string }

describe('write and edit keep a bounded diff in their metadata', () => {
  it('a 4 MB new file keeps the diff of its first lines within maxDiffBytes, and counts every line', async () => {
    const root = await tempDir()
    const { call } = await loadFs(root)
    const content = lines(60_000, 'new')
    const result = await call('write', { path: 'big.txt', content })
    expect(valueOf(result).operation).toBe('create')
    const meta = result.meta as DiffMeta
    expect(Buffer.byteLength(meta.diff)).toBeLessThanOrEqual(50_000)
    expect(meta).toMatchObject({ additions: 60_000, deletions: 0, truncated: true })
    expect(meta.minimal).toBeUndefined()
    const [header, hunk, ...added] = meta.diff.split('\n').slice(1, -1)
    expect(header).toBe('+++ b/big.txt')
    expect(hunk).toBe(`@@ -0,0 +1,${added.length} @@`)
    expect(added).toEqual(
      content
        .split('\n')
        .slice(0, added.length)
        .map((line) => `+${line}`),
    )
  })

  it('rewriting every line of a 1 MB file is described as a replacement of both sides, bounded, without a line-by-line diff', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'log.txt'), lines(15_000, 'old'))
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    // Before the bound, this line diff ran for minutes on the event loop.
    const meta = (await call('write', { path: 'log.txt', content: lines(15_000, 'new') })).meta as DiffMeta
    expect(meta).toMatchObject({ operation: 'update', additions: 15_000, deletions: 15_000, truncated: true, minimal: false })
    expect(Buffer.byteLength(meta.diff)).toBeLessThanOrEqual(50_000)
    const body = meta.diff.split('\n').slice(3, -1)
    expect(body[0]).toBe(`-line 0 old ${'x'.repeat(60)}`)
    expect(body.filter((line) => line.startsWith('+')).length).toBeGreaterThan(100)
    expect(meta.diff).toMatch(/^--- a\/log\.txt\n\+\+\+ b\/log\.txt\n@@ -1,(\d+) \+1,(\d+) @@\n/)
  })

  it('a few changes far apart keep whole hunks up to maxDiffBytes; a small change is kept whole', async () => {
    const root = await tempDir()
    const before = lines(2_000, 'same')
    await writeFile(join(root, 'a.txt'), before)
    const { call } = await loadFs(root, { requireReadBeforeWrite: false, maxDiffBytes: 1_000 })
    const after = before
      .replace('line 100 same', 'line 100 CHANGED')
      .replace('line 900 same', 'line 900 CHANGED')
      .replace('line 1800 same', 'line 1800 CHANGED')
    const meta = (await call('write', { path: 'a.txt', content: after })).meta as DiffMeta
    expect(meta).toMatchObject({ additions: 3, deletions: 3, truncated: true })
    expect(meta.minimal).toBeUndefined()
    expect(Buffer.byteLength(meta.diff)).toBeLessThanOrEqual(1_000)
    // Whole hunks: each kept one holds its change and its three lines of context on both sides.
    const hunks = meta.diff.split('\n').filter((line) => line.startsWith('@@'))
    expect(hunks.length).toBeGreaterThanOrEqual(1)
    expect(hunks.length).toBeLessThan(3)
    expect(hunks[0]).toBe('@@ -98,7 +98,7 @@')
    const small = (await call('edit', { path: 'a.txt', old_string: 'line 5 same', new_string: 'line 5 edited' })).meta as DiffMeta
    expect(small.truncated).toBeUndefined()
    expect(small.diff).toContain('+line 5 edited')
  })
})
