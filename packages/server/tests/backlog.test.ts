import { connect } from 'node:net'
import { once } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { sseReader, startHarness, type Harness } from './harness.js'

describe('an event stream whose client stops reading', () => {
  let harness: Harness | undefined
  afterEach(async () => {
    await harness?.close()
    harness = undefined
  })

  it('is disconnected once its live backlog passes maxLiveBacklog, while a reading client gets every delta and the run ends', async () => {
    // 1 500 deltas of 8 KiB: far more than the loopback socket buffers of a client that reads nothing.
    const pieces = Array.from({ length: 1500 }, (_, index) => `${String(index).padStart(5, '0')}${'x'.repeat(8187)}`)
    const text = pieces.join('')
    harness = await startHarness({ store: { kind: 'jsonl' }, maxLiveBacklog: 512 * 1024, turns: [{ text: pieces, delayMs: 1 }] })
    const h = harness
    const response = await h.api('/api/runs', { method: 'POST', body: JSON.stringify({ prompt: 'go' }) })
    const { id } = (await response.json()) as { id: string }

    // The stuck client: a raw socket that sends its request and then reads nothing until the run is over.
    const stuck = connect(h.server.port, '127.0.0.1')
    await once(stuck, 'connect')
    stuck.pause()
    stuck.write(`GET /api/sessions/${id}/events HTTP/1.1\r\nHost: 127.0.0.1:${h.server.port}\r\n\r\n`)

    const messages = await sseReader(await h.api(`/api/sessions/${id}/events`)).until((message) => message.event === 'end')
    const deltas = messages.filter((message) => message.event === 'delta').map((message) => (JSON.parse(message.data) as { text: string }).text)
    // Merged or not, the reading client's deltas are the turn's text, whole and in order.
    expect(deltas.join('')).toBe(text)
    expect(messages.at(-1)?.event).toBe('end')

    // The stuck client now reads what it was sent: the stream was cut (no `end`), long before the text was through.
    let received = ''
    stuck.setEncoding('utf8')
    stuck.on('data', (chunk: string) => (received += chunk))
    stuck.resume()
    await once(stuck, 'close')
    expect(received).toMatch(/^HTTP\/1\.1 200/)
    expect(received).not.toContain('event: end')
    expect(received.length).toBeLessThan(text.length)
  }, 60_000)
})
