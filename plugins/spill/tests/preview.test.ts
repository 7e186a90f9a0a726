import { describe, expect, it } from 'vitest'
import { buildPreview, spillNotice } from '../src/preview.js'
import { sanitizeName } from '../src/store.js'

const bytes = (text: string) => Buffer.byteLength(text)

describe('buildPreview', () => {
  it('keeps head, notice and tail within maxInlineBytes even with a long path', () => {
    const text = 'x'.repeat(10_000)
    const path = '/tmp/' + 'p'.repeat(500) + '/out.txt'
    const preview = buildPreview(text, 10_000, path, { maxInlineBytes: 2_000, headBytes: 1_000, tailBytes: 900 })
    expect(bytes(preview)).toBeLessThanOrEqual(2_000)
    expect(preview).toContain(`Full output: ${path}.`)
    const omitted = Number(/Omitted (\d+) bytes/.exec(preview)![1])
    const [head, , tail] = preview.split('\n\n')
    expect(omitted).toBe(10_000 - bytes(head!) - bytes(tail!))
  })

  it('prefers line boundaries near the cut', () => {
    const text = Array.from({ length: 1_000 }, (_, i) => `line ${i}`).join('\n')
    const preview = buildPreview(text, bytes(text), '/s/out.txt', { maxInlineBytes: 1_024, headBytes: 300, tailBytes: 300 })
    const [head, notice, tail] = preview.split('\n\n')
    expect(text.startsWith(head! + '\n')).toBe(true)
    expect(tail!.startsWith('line ')).toBe(true)
    expect(notice).toMatch(/^\(Omitted \d+ bytes\. Full output: \/s\/out\.txt\. Read it with read offset\/limit or grep\.\)$/)
  })

  it('states the notice exactly', () => {
    expect(spillNotice(12, '/a/b.txt')).toMatchInlineSnapshot(`"(Omitted 12 bytes. Full output: /a/b.txt. Read it with read offset/limit or grep.)"`)
  })
})

describe('sanitizeName', () => {
  it.each([
    ['../../etc/passwd', 'etc_passwd'],
    ['a b/c', 'a_b_c'],
    ['.hidden', 'hidden'],
    ['ok-name_1.txt', 'ok-name_1.txt'],
  ])('%s → %s', (input, output) => {
    expect(sanitizeName(input)).toBe(output)
  })
})
