import { describe, expect, it } from 'vitest'
import { PathLines } from '../src/output-lines.js'

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
