import { PassThrough } from 'node:stream'
import { describe, expect, it, vi } from 'vitest'
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
      progress.onEvent({
        type: 'tool/end',
        callId: 'c',
        name: 'read',
        isError: true,
        code: 'DENIED',
        durationMs: 1234,
        content: [{ type: 'text', text: 'Error: no' }],
      })
      const plain = out
        .text()
        .replaceAll(ESC, '')
        .replace(/\[\d+m/g, '')
      expect(plain).toBe('  ✗ read a.js (1.2s) DENIED: no\n')
      expect(out.text().includes(ESC)).toBe(isTTY)
    }
  })
})

describe('progress on long work', () => {
  it('announces a model that has streamed nothing and a tool still running after 1.5 s', () => {
    vi.useFakeTimers()
    try {
      const out = terminal(false)
      const progress = new Progress(new Output(out.stream, terminal(false).stream, {}), false)
      progress.onEvent({ type: 'turn/start', turn: 1 })
      vi.advanceTimersByTime(1499)
      expect(out.text()).toBe('')
      vi.advanceTimersByTime(1)
      expect(out.text()).toBe('  … waiting for the model (turn 1)\n')
      progress.onEvent({ type: 'tool/start', callId: 'c', name: 'bash', arguments: '{"command":"sleep 5"}' })
      vi.advanceTimersByTime(1500)
      progress.onEvent({ type: 'tool/end', callId: 'c', name: 'bash', isError: false, durationMs: 5000, content: [] })
      expect(out.text().split('\n').slice(1)).toEqual(['  … bash sleep 5 (running)', '  ✓ bash sleep 5 (5.0s)', ''])
    } finally {
      vi.useRealTimers()
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

describe('stderr', () => {
  it('drops styles from diagnostics when only stdout is a terminal', () => {
    const out = terminal(true)
    const err = terminal(false)
    const output = new Output(out.stream, err.stream, {})
    output.error(output.style('red', 'bad'))
    expect(err.text()).toBe('bad\n')
  })
})
