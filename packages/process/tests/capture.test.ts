import { describe, expect, it } from 'vitest'
import { ByteCapture, TextLog } from '../src/index.js'

describe('ByteCapture', () => {
  it('cuts at UTF-8 character boundaries and counts every byte not shown', () => {
    const capture = new ByteCapture(4, 4)
    const text = 'ééééé✓✓✓' // 10 + 9 bytes
    for (const byte of Buffer.from(text)) capture.push(Buffer.from([byte]))
    const { text: shown, omitted } = capture.text()
    expect(shown).toBe('éé\n[… 12 bytes omitted …]\n✓')
    expect(omitted).toBe(Buffer.byteLength(text) - Buffer.byteLength('éé✓'))
  })

  it('keeps everything when within the bound', () => {
    const capture = new ByteCapture(4, 4)
    capture.push(Buffer.from('12345678'))
    expect(capture.text()).toEqual({ text: '12345678', omitted: 0 })
  })

  it('holds at most head + tail bytes whatever the volume, and never pins a pushed chunk in its head', () => {
    const capture = new ByteCapture(10, 20)
    const chunk = Buffer.alloc(65_536, 'x')
    for (let round = 0; round < 100; round++) capture.push(chunk)
    expect(capture.end).toBe(6_553_600)
    expect(capture.omitted).toBe(6_553_600 - 30)
    const { text } = capture.text()
    expect(text).toBe(`${'x'.repeat(10)}\n[… ${6_553_600 - 30} bytes omitted …]\n${'x'.repeat(20)}`)
    expect((capture as unknown as { head: Buffer[] }).head[0]!.buffer).not.toBe(chunk.buffer)
  })

  it('counts without keeping a tail when the tail limit is 0', () => {
    const capture = new ByteCapture(3, 0)
    capture.push(Buffer.from('abcdef'))
    expect(capture.text()).toEqual({ text: 'abc\n[… 3 bytes omitted …]\n', omitted: 3 })
  })
})

describe('TextLog', () => {
  const filled = () => {
    const log = new TextLog(10, 20)
    const text = Array.from({ length: 100 }, (_, index) => String.fromCharCode(65 + (index % 26))).join('')
    for (let at = 0; at < text.length; at += 7) log.append(text.slice(at, at + 7))
    return { log, text }
  }

  it('reads the head, stops at the gap, jumps over it and keeps offsets absolute', () => {
    const { log, text } = filled()
    expect(log.end).toBe(100)
    expect(log.dropped).toBe(70)
    expect(log.read(0, 50)).toEqual({ offset: 0, text: text.slice(0, 10), dropped: 0 })
    expect(log.read(4, 3)).toEqual({ offset: 4, text: text.slice(4, 7), dropped: 0 })
    expect(log.read(10, 50)).toEqual({ offset: 80, text: text.slice(80), dropped: 70 })
    expect(log.read(95, 50)).toEqual({ offset: 95, text: text.slice(95), dropped: 0 })
    expect(log.read(100, 50)).toEqual({ offset: 100, text: '', dropped: 0 })
  })

  it('reads across head and tail when nothing was dropped', () => {
    const log = new TextLog(4, 100)
    log.append('abcdef')
    log.append('ghij')
    expect(log.dropped).toBe(0)
    expect(log.read(2, 6)).toEqual({ offset: 2, text: 'cdefgh', dropped: 0 })
  })

  it('refuses a tail of no characters', () => {
    expect(() => new TextLog(10, 0)).toThrow(RangeError)
  })
})
