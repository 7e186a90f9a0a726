import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { frameId, LineTransport, type OversizeFrame } from '../src/stdio.js'

async function transport(maxFrameBytes: number) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const received: JSONRPCMessage[] = []
  const refused: OversizeFrame[] = []
  const errors: Error[] = []
  const line = new LineTransport(stdin, stdout, { maxFrameBytes, onOversize: (frame) => refused.push(frame) })
  // The SDK Transport interface uses callback properties.
  // oxlint-disable-next-line unicorn/prefer-add-event-listener
  line.onmessage = (message) => received.push(message)
  // oxlint-disable-next-line unicorn/prefer-add-event-listener
  line.onerror = (error) => errors.push(error)
  await line.start()
  let written = ''
  stdout.on('data', (chunk) => (written += chunk))
  return {
    stdin,
    line,
    received,
    refused,
    errors,
    replies: () =>
      written
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text)),
  }
}

const request = (id: number, text: string) => JSON.stringify({ method: 'tools/call', params: { name: 'echo', arguments: { text } }, jsonrpc: '2.0', id })
const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('LineTransport', () => {
  it('reassembles frames split across chunks and several frames in one chunk', async () => {
    const { stdin, received } = await transport(1_000)
    const [first, second] = [request(1, 'a'), request(2, 'b')]
    stdin.write(first.slice(0, 10))
    stdin.write(first.slice(10) + '\n' + second + '\r\n')
    await tick()
    expect(received.map((message) => (message as { id: number }).id)).toEqual([1, 2])
  })

  it('answers a frame over the limit with InvalidRequest for its id, keeps reading, and never buffers it', async () => {
    const { stdin, received, refused, replies } = await transport(1_000)
    const huge = request(7, 'x'.repeat(5_000))
    for (let offset = 0; offset < huge.length; offset += 300) stdin.write(huge.slice(offset, offset + 300))
    stdin.write('\n' + request(8, 'small') + '\n')
    await tick()
    expect(refused).toEqual([{ bytes: huge.length, id: 7 }])
    expect(replies()).toEqual([{ jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringContaining('MCP_FRAME_TOO_LARGE') } }])
    expect(received.map((message) => (message as { id: number }).id)).toEqual([8])
  })

  it('reports malformed JSON as an error and goes on', async () => {
    const { stdin, received, errors } = await transport(1_000)
    stdin.write('{not json\n' + request(3, 'ok') + '\n')
    await tick()
    expect(errors).toHaveLength(1)
    expect(received).toHaveLength(1)
  })

  it.each([
    ['{"jsonrpc":"2.0","id":"a\\"b","method":"x"', '', 'a"b'],
    ['{"method":"x","params":{"id":1', ',"jsonrpc":"2.0","id":42}', 42],
    ['{"method":"x","params":{"nested":{"id":1', '"id":1}}}', null],
  ])('finds the id of a refused frame from its edges: %s … %s', (head, tail, id) => {
    expect(frameId(head, tail)).toEqual(id)
  })
})

describe('LineTransport close', () => {
  it('removes its stdin listeners, pauses stdin and reports the close', async () => {
    const { stdin, line } = await transport(1_000)
    let closed = 0
    // oxlint-disable-next-line unicorn/prefer-add-event-listener
    line.onclose = () => void closed++
    expect(stdin.listenerCount('data')).toBe(1)
    await line.close()
    expect([stdin.listenerCount('data'), stdin.listenerCount('error'), stdin.isPaused(), closed]).toEqual([0, 0, true, 1])
  })
})
