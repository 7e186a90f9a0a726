import { describe, expect, it } from 'vitest'
import { SseParser, Utf8Pieces } from '../src/sse.js'
import { ChunkAssembler, completionEvents } from '../src/assemble.js'

/** Feeds `text` in pieces of `size` characters and collects the data of every event. */
function parse(text: string, size = text.length): string[] {
  const parser = new SseParser()
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(...parser.push(text.slice(i, i + size)).map((event) => event.data))
  out.push(...parser.end().map((event) => event.data))
  return out
}

describe('SseParser', () => {
  const stream = ': keep-alive comment\r\ndata: {"a":1}\r\n\r\nevent: message\ndata: line one\ndata: line two\n\ndata:no-space\r\rdata: [DONE]\n\n'

  it.each([1, 2, 3, 7, 1000])('gives the same events whatever the piece size (%i), across CRLF, CR and LF line ends', (size) => {
    expect(parse(stream, size)).toEqual(['{"a":1}', 'line one\nline two', 'no-space', '[DONE]'])
  })

  it('dispatches a last event that is not followed by a blank line at end of stream', () => {
    expect(parse('data: {"tail":true}')).toEqual(['{"tail":true}'])
  })

  it('keeps the event name', () => {
    expect(new SseParser().push('event: error\ndata: {"message":"x"}\n\n')).toEqual([{ event: 'error', data: '{"message":"x"}' }])
  })
})

describe('ChunkAssembler', () => {
  const chunk = (delta: object, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] })

  it('assembles interleaved fragments by index and emits the calls in index order', () => {
    const assembler = new ChunkAssembler()
    assembler.push(chunk({ tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'second', arguments: '{"x"' } }] }))
    assembler.push(chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'first', arguments: '' } }] }))
    assembler.push(
      chunk({
        tool_calls: [
          { index: 1, function: { arguments: ':1}' } },
          { index: 0, function: { arguments: '{}' } },
        ],
      }),
    )
    assembler.push(chunk({}, 'tool_calls'))
    expect(assembler.finish()).toEqual([
      { type: 'tool-call', call: { id: 'a', name: 'first', arguments: '{}' } },
      { type: 'tool-call', call: { id: 'b', name: 'second', arguments: '{"x":1}' } },
      { type: 'done', finishReason: 'tool_calls' },
    ])
  })

  it('accepts servers that omit index, repeat the id and name, send object arguments, or send none', () => {
    const assembler = new ChunkAssembler()
    assembler.push(chunk({ tool_calls: [{ id: 'a', function: { name: 'read', arguments: '{"path":' } }] }))
    assembler.push(chunk({ tool_calls: [{ id: 'a', function: { name: 'read', arguments: '"x"}' } }] }))
    assembler.push(chunk({ tool_calls: [{ id: 'b', function: { name: 'glob', arguments: { pattern: '*.ts' } } }] }))
    assembler.push(chunk({ tool_calls: [{ function: { name: 'ls' } }] }))
    const calls = assembler.calls()
    expect(calls.slice(0, 2)).toEqual([
      { id: 'a', name: 'read', arguments: '{"path":"x"}' },
      { id: 'b', name: 'glob', arguments: '{"pattern":"*.ts"}' },
    ])
    expect(calls[2]).toMatchObject({ name: 'ls', arguments: '{}' })
    expect(calls[2]!.id).toMatch(/^call_2_/)
  })

  it('reports usage from a trailing usage chunk and text from content deltas', () => {
    const assembler = new ChunkAssembler()
    expect(assembler.push(chunk({ role: 'assistant', content: '' }))).toBe('')
    expect(assembler.push(chunk({ content: 'hé' }))).toBe('hé')
    assembler.push(chunk({}, 'length'))
    assembler.push({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })
    expect(assembler.finish()).toEqual([
      { type: 'done', finishReason: 'length', usage: { inputTokens: 9, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ])
  })

  it('turns an error object inside the stream into MODEL_STREAM with the server message', () => {
    expect(() => new ChunkAssembler().push({ error: { message: 'context length exceeded' } })).toThrow(
      expect.objectContaining({
        code: 'MODEL_STREAM',
        message: 'the server reported an error mid-stream: context length exceeded',
      }),
    )
  })

  it('refuses a tool call without a function name', () => {
    const assembler = new ChunkAssembler()
    assembler.push(chunk({ tool_calls: [{ index: 0, id: 'a', function: { arguments: '{}' } }] }))
    expect(() => assembler.finish()).toThrow(expect.objectContaining({ code: 'MODEL_STREAM' }))
  })

  it('converts a non-streaming completion into the same events', () => {
    expect(
      completionEvents({
        choices: [
          {
            finish_reason: 'tool_calls',
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 2 },
      }),
    ).toEqual([
      { type: 'tool-call', call: { id: 'x', name: 'f', arguments: '{"a":1}' } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ])
  })
})

describe('Utf8Pieces', () => {
  /** Decodes `bytes` cut at `cuts` with Utf8Pieces and with the streaming TextDecoder. */
  function both(bytes: Uint8Array, cuts: number[]): [string, string] {
    const pieces = new Utf8Pieces()
    const streaming = new TextDecoder('utf-8', { ignoreBOM: false })
    let ours = ''
    let theirs = ''
    let start = 0
    for (const cut of [...cuts, bytes.length]) {
      const part = bytes.subarray(start, cut)
      ours += pieces.push(part)
      theirs += streaming.decode(part, { stream: true })
      start = cut
    }
    return [ours + pieces.end(), theirs + streaming.decode()]
  }

  it('matches the streaming TextDecoder on characters split across every boundary', () => {
    const text = '\uFEFFa€𝄞b ü 中文 😀 end'
    const bytes = new TextEncoder().encode(text)
    for (let cut = 0; cut <= bytes.length; cut++) {
      const [ours, theirs] = both(bytes, [cut])
      expect(ours, `cut at ${cut}`).toBe(theirs)
    }
  })

  it('matches the streaming TextDecoder on random bytes cut at random places, including invalid UTF-8', () => {
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    for (let round = 0; round < 2000; round++) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(random() * 24) }, () =>
        random() < 0.5 ? 0x80 + Math.floor(random() * 0x7f) : Math.floor(random() * 256),
      )
      const cuts = Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * bytes.length)).sort((a, b) => a - b)
      const [ours, theirs] = both(bytes, cuts)
      expect(ours, `bytes ${Buffer.from(bytes).toString('hex')} cut at ${cuts}`).toBe(theirs)
    }
  })

  it('turns a character still cut at the end into U+FFFD', () => {
    const pieces = new Utf8Pieces()
    expect(pieces.push(new Uint8Array([0x61, 0xe2, 0x82]))).toBe('a')
    expect(pieces.end()).toBe('\uFFFD')
  })
})
