import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { Output, Progress, summarize, useColor } from '../src/index.js'

const ESC = String.fromCharCode(27)

function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY })
  let text = ''
  stream.on('data', (chunk) => (text += chunk))
  return { stream, text: () => text }
}

describe('colours', () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
  ])('isTTY=%s env=%j → %s', (isTTY, env, expected) => {
    expect(useColor(Object.assign(new PassThrough(), { isTTY }), env)).toBe(expected)
  })

  it('progress lines carry ANSI styles on a TTY and none otherwise', () => {
    for (const isTTY of [true, false]) {
      const out = terminal(isTTY)
      const progress = new Progress(new Output(out.stream, terminal(false).stream, {}), false)
      progress.onEvent({ type: 'tool/start', callId: 'c', name: 'read', arguments: '{"path":"a.js"}' })
      progress.onEvent({ type: 'tool/end', callId: 'c', name: 'read', isError: true, code: 'DENIED', durationMs: 1234, content: [{ type: 'text', text: 'Error: no' }] })
      const plain = out.text().replaceAll(ESC, '').replace(/\[\d+m/g, '')
      expect(plain).toBe('  ✗ read a.js (1.2s) DENIED: no\n')
      expect(out.text().includes(ESC)).toBe(isTTY)
    }
  })
})

describe('summarize', () => {
  it.each([
    ['{"command":"npm test","timeout_ms":5}', 'npm test'],
    ['{"path":"src/a.js","pattern":"foo"}', 'foo'],
    ['{"text":"hello"}', 'hello'],
    ['{"n":1}', '{"n":1}'],
    ['not json', 'not json'],
  ])('%s → %s', (raw, expected) => {
    expect(summarize(raw)).toBe(expected)
  })
})
