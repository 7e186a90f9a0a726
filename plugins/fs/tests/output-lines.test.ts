import { describe, expect, it } from 'vitest'
import { PathLines } from '../src/output-lines.js'
import { clipLine, clippedText } from '../src/search.js'

describe('PathLines (rg --files output)', () => {
  it('joins paths split across chunks, multi-byte characters included, skips empty lines and emits an unterminated last path', () => {
    const seen: string[][] = []
    const lines = new PathLines((paths) => (seen.push(paths), true))
    const bytes = Buffer.from('src/a.ts\nsrc/é😀/b.ts\n\nlast/ü.md')
    // Every split point, one byte at a time: a character's bytes arrive in separate chunks too.
    for (let index = 0; index < bytes.length; index++) expect(lines.push(bytes.subarray(index, index + 1))).toBe(true)
    lines.end()
    expect(seen.flat()).toEqual(['src/a.ts', 'src/é😀/b.ts', 'last/ü.md'])
    expect(seen.every((paths) => paths.length > 0)).toBe(true)
  })

  it('returns false once the consumer stops', () => {
    const lines = new PathLines((paths) => paths.length < 2)
    expect(lines.push(Buffer.from('a\n'))).toBe(true)
    expect(lines.push(Buffer.from('b\nc\n'))).toBe(false)
  })
})

describe('clippedText', () => {
  // What a clipped line shows must not depend on how little of the line was decoded.
  const shown = (text: string, max: number) => {
    const data = Buffer.from(text)
    return clipLine(clippedText(data, 0, data.length, max), max, data.length)
  }
  const whole = (text: string, max: number) => clipLine(text, max, Buffer.byteLength(text))

  it.each([
    ['ASCII, far longer than the limit', 'x'.repeat(10_000)],
    ['ASCII, exactly the limit', 'y'.repeat(80)],
    ['ASCII, one over the limit', 'y'.repeat(81)],
    ['two-byte characters', 'é'.repeat(500)],
    ['three-byte characters', '€'.repeat(500)],
    ['four-byte characters (surrogate pairs)', '😀'.repeat(500)],
    ['ASCII with a four-byte character cut at the quick boundary', `${'a'.repeat(80)}😀${'b'.repeat(100)}`],
    ['ASCII with a three-byte character cut at the quick boundary', `${'a'.repeat(81)}€${'b'.repeat(100)}`],
    ['mixed widths', 'aé€😀'.repeat(200)],
    ['short', 'short line'],
  ])('%s: same as decoding the whole line', (_name, text) => {
    for (const max of [80, 81, 100]) expect(shown(text, max)).toBe(whole(text, max))
  })

  it('an invalid byte sequence straddling the boundary reads as a whole decode does', () => {
    const data = Buffer.concat([Buffer.from('a'.repeat(81)), Buffer.from([0xe2, 0x82]), Buffer.from('tail'.repeat(50))])
    expect(clipLine(clippedText(data, 0, data.length, 80), 80, data.length)).toBe(clipLine(data.toString('utf8'), 80, data.length))
    expect(clippedText(data, 0, data.length, 85).slice(0, 85)).toBe(data.toString('utf8').slice(0, 85))
  })

  it('decodes a long ASCII line only as far as max + 2 bytes', () => {
    const data = Buffer.from('z'.repeat(1_000_000))
    expect(clippedText(data, 0, data.length, 2000)).toHaveLength(2001)
  })
})
