import { describe, expect, it } from 'vitest'
import { utf8Head, utf8Tail } from '../src/index.js'

const bytes = (text: string) => Buffer.byteLength(text)
const roundTrips = (text: string) => Buffer.from(text, 'utf8').toString('utf8') === text && !text.includes('\uFFFD')

describe('utf8Head / utf8Tail', () => {
  it.each([
    ['ascii', 'abcdefghij'.repeat(10)],
    ['two-byte', 'é'.repeat(100)],
    ['three-byte', '€'.repeat(100)],
    ['four-byte (surrogate pairs)', '😀'.repeat(100)],
    ['mixed', 'a€😀é'.repeat(50)],
  ])('never split a %s character and never exceed the byte budget', (_name, text) => {
    for (let budget = 0; budget <= 40; budget++) {
      const head = utf8Head(text, budget)
      const tail = utf8Tail(text, budget)
      expect(bytes(head)).toBeLessThanOrEqual(budget)
      expect(bytes(tail)).toBeLessThanOrEqual(budget)
      expect(text.startsWith(head)).toBe(true)
      expect(text.endsWith(tail)).toBe(true)
      expect(roundTrips(head) && roundTrips(tail)).toBe(true)
      // Maximal: one more character would not fit.
      expect(bytes(text.slice(0, head.length + (text.codePointAt(head.length)! > 0xffff ? 2 : 1)))).toBeGreaterThan(budget)
    }
  })

  it('returns short texts whole', () => {
    expect(utf8Head('hé', 10)).toBe('hé')
    expect(utf8Tail('hé', 10)).toBe('hé')
  })
})
