import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { firstInvalidUtf8 } from '../src/file-io.js'
import { codeOf, loadFs, tempDir, textOf, valueOf } from './helpers.js'

// "café = 1\nnaïve = 2\n" in Latin-1: é and ï are single bytes that are not valid UTF-8.
const LATIN1 = Buffer.from('caf\xe9 = 1\nna\xefve = 2\n', 'latin1')

async function setup(bytes: Buffer) {
  const root = await tempDir()
  await writeFile(join(root, 'legacy.txt'), bytes)
  const { call } = await loadFs(root)
  return { root, call }
}

describe('files that are not UTF-8', () => {
  it('edit refuses with NOT_TEXT before writing, and leaves every byte as it was', async () => {
    const { root, call } = await setup(LATIN1)
    valueOf(await call('read', { path: 'legacy.txt' }))
    // The edited span (line 2) is plain ASCII: decoding and re-encoding would still corrupt line 1.
    const result = await call('edit', { path: 'legacy.txt', old_string: '= 2', new_string: '= 3' })
    expect(codeOf(result)).toBe('NOT_TEXT')
    expect(textOf(result)).toMatchInlineSnapshot(
      `"Error: legacy.txt is not UTF-8 text (byte 0xe9 on line 1 is not valid UTF-8; it may be Latin-1 or another encoding), so write and edit leave it unchanged; convert or change it with bash (e.g. iconv, sed) instead"`,
    )
    expect(await readFile(join(root, 'legacy.txt'))).toEqual(LATIN1)
    expect(await readdir(root)).toEqual(['legacy.txt'])
  })

  it('write over an existing non-UTF-8 file refuses with NOT_TEXT (what read showed was not its bytes)', async () => {
    const { root, call } = await setup(LATIN1)
    const shown = valueOf(await call('read', { path: 'legacy.txt' }))
    // Writing back what read showed would replace é with U+FFFD for good.
    const content = shown.lines.map((line: { text: string }) => line.text).join('\n') + '\n'
    const result = await call('write', { path: 'legacy.txt', content })
    expect(codeOf(result)).toBe('NOT_TEXT')
    expect(await readFile(join(root, 'legacy.txt'))).toEqual(LATIN1)
  })

  it('read shows the lines with U+FFFD for bytes that are not UTF-8, and does not fail', async () => {
    const { call } = await setup(LATIN1)
    const value = valueOf(await call('read', { path: 'legacy.txt' }))
    expect(value.lines).toEqual([
      { number: 1, text: 'caf\uFFFD = 1' },
      { number: 2, text: 'na\uFFFDve = 2' },
    ])
  })

  it('edit of a UTF-8 file keeps every byte outside the edited span (BOM, CRLF, multi-byte, no final newline)', async () => {
    const original = Buffer.from('\uFEFFcafé ☕ 1\r\nnaïve 𝄞 2\r\nlast', 'utf8')
    const { root, call } = await setup(original)
    valueOf(await call('read', { path: 'legacy.txt' }))
    valueOf(await call('edit', { path: 'legacy.txt', old_string: '𝄞 2', new_string: '𝄢 3' }))
    const after = await readFile(join(root, 'legacy.txt'))
    const expected = Buffer.from('\uFEFFcafé ☕ 1\r\nnaïve 𝄢 3\r\nlast', 'utf8')
    expect(after.equals(expected)).toBe(true)
  })

  it('a file created by write is UTF-8, and an invalid byte offset is found exactly', async () => {
    const { root, call } = await setup(LATIN1)
    valueOf(await call('write', { path: 'new.txt', content: 'ünïcode\n' }))
    expect(await readFile(join(root, 'new.txt'))).toEqual(Buffer.from('ünïcode\n', 'utf8'))
    expect(firstInvalidUtf8(LATIN1)).toBe(3)
    expect(firstInvalidUtf8(Buffer.from('ok ☕', 'utf8'))).toBe(6)
    // Overlong "/" (C0 AF), a UTF-16 surrogate (ED A0 80), a truncated sequence at the end.
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xc0, 0xaf]))).toBe(1)
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]))).toBe(2)
    expect(firstInvalidUtf8(Buffer.from([0x61, 0xe2, 0x98]))).toBe(1)
  })
})
