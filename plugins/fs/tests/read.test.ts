import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, loadFs, tempDir, textOf, valueOf } from './helpers.js'

describe('read', () => {
  it('returns numbered lines and renders them cat -n style', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'a.txt'), 'first\n\tindented\nlast')
    const { call } = await loadFs(root)
    const result = await call('read', { path: 'a.txt' })
    expect(valueOf(result)).toEqual({
      path: 'a.txt',
      offset: 1,
      lines: [
        { number: 1, text: 'first' },
        { number: 2, text: '\tindented' },
        { number: 3, text: 'last' },
      ],
      totalLines: 3,
    })
    expect(textOf(result)).toMatchInlineSnapshot(`
      "     1	first
           2		indented
           3	last"
    `)
  })

  it('pages with offset and limit, and the footer says where to continue', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'n.txt'), Array.from({ length: 10 }, (_, i) => `row ${i + 1}`).join('\n') + '\n')
    const { call } = await loadFs(root)
    const result = await call('read', { path: 'n.txt', offset: 4, limit: 3 })
    expect(valueOf(result).lines.map((line: any) => line.number)).toEqual([4, 5, 6])
    expect(valueOf(result).totalLines).toBe(10)
    expect(textOf(result)).toMatchInlineSnapshot(`
      "     4	row 4
           5	row 5
           6	row 6

      (Showing lines 4-6 of 10 in n.txt. Continue with offset=7.)"
    `)
    expect(codeOf(await call('read', { path: 'n.txt', offset: 11 }))).toBe('OFFSET_OUT_OF_RANGE')
  })

  it('bounds a call by lines, bytes and line length', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'wide.txt'), `${'w'.repeat(5000)}\nshort\n`)
    await writeFile(join(root, 'many.txt'), Array.from({ length: 5000 }, (_, i) => `${i + 1} ${'m'.repeat(40)}`).join('\n'))
    const { call } = await loadFs(root, { maxReadLines: 100, maxReadBytes: 2048, maxLineLength: 100 })
    const wide = valueOf(await call('read', { path: 'wide.txt' }))
    expect(wide.lines[0].text).toBe(`${'w'.repeat(100)} … [line truncated: 5000 bytes in total]`)
    expect(wide.lines[1].text).toBe('short')
    const many = await call('read', { path: 'many.txt', limit: 1000 })
    const lines = valueOf(many).lines
    // 2048 bytes of "n mmm…" lines (about 50 bytes rendered each): fewer than the 100-line cap.
    expect(lines.length).toBeGreaterThan(30)
    expect(lines.length).toBeLessThan(100)
    expect(textOf(many)).toContain(`Continue with offset=${lines.length + 1}.`)
  })

  it('strips CR from CRLF lines and counts an unterminated last line', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'dos.txt'), 'one\r\ntwo\r\nthree')
    const { call } = await loadFs(root)
    expect(valueOf(await call('read', { path: 'dos.txt' })).lines).toEqual([
      { number: 1, text: 'one' },
      { number: 2, text: 'two' },
      { number: 3, text: 'three' },
    ])
  })

  it('reports an empty file, and refuses binary files, directories and missing files with codes', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'empty.txt'), '')
    await writeFile(join(root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))
    await mkdir(join(root, 'dir'))
    const { call } = await loadFs(root)
    const empty = await call('read', { path: 'empty.txt' })
    expect(valueOf(empty)).toEqual({ path: 'empty.txt', offset: 1, lines: [], totalLines: 0 })
    expect(textOf(empty)).toBe('(empty.txt is empty)')
    const binary = await call('read', { path: 'image.png' })
    expect(codeOf(binary)).toBe('BINARY_FILE')
    expect(textOf(binary)).toMatchInlineSnapshot(
      `"Error: image.png is a binary file; read only shows text (use bash with a tool like xxd or file to inspect it)"`,
    )
    const dir = await call('read', { path: 'dir' })
    expect(codeOf(dir)).toBe('IS_DIRECTORY')
    expect(textOf(dir)).toMatchInlineSnapshot(`"Error: dir is a directory, not a file; use glob to list its files"`)
    expect(codeOf(await call('read', { path: 'nope.txt' }))).toBe('NOT_FOUND')
  })
})
