/** One dispatched server-sent event: its `event:` name (default `message`) and its joined `data:` lines. */
export interface SseEvent {
  event: string
  data: string
}

/**
 * An incremental `text/event-stream` parser (WHATWG rules): feed it decoded text in arbitrary pieces; it
 * returns the events completed so far. Handles CRLF/CR/LF line ends, comments, multi-line data and
 * `event:` fields; `id:` and `retry:` are ignored (the Chat Completions stream does not use them).
 */
export class SseParser {
  private buffer = ''
  /** The joined `data:` lines of the event being read (`undefined`: none yet). */
  private data: string | undefined
  private event = ''
  private pendingCR = false

  push(text: string): SseEvent[] {
    const out: SseEvent[] = []
    let chunk = text
    // A CR ending the previous piece may be the first half of a CRLF.
    if (this.pendingCR && chunk.startsWith('\n')) chunk = chunk.slice(1)
    this.pendingCR = false
    let buffer = this.buffer + chunk
    let start = 0
    // Next CR and LF positions, searched again only once passed: one linear scan per piece, not per line.
    let lf = buffer.indexOf('\n')
    let cr = buffer.indexOf('\r')
    while (lf >= 0 || cr >= 0) {
      let end: number
      let next: number
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        end = cr
        if (cr + 1 === buffer.length) {
          next = cr + 1
          this.pendingCR = true
        } else next = buffer.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1
      } else {
        end = lf
        next = lf + 1
      }
      this.line(buffer.slice(start, end), out)
      start = next
      if (lf >= 0 && lf < start) lf = buffer.indexOf('\n', start)
      if (cr >= 0 && cr < start) cr = buffer.indexOf('\r', start)
    }
    buffer = buffer.slice(start)
    this.buffer = buffer
    return out
  }

  /** Flushes at end of stream: a final event not followed by a blank line is still dispatched. */
  end(): SseEvent[] {
    const out: SseEvent[] = []
    if (this.buffer) this.line(this.buffer, out)
    this.buffer = ''
    this.line('', out)
    return out
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data !== undefined) out.push({ event: this.event || 'message', data: this.data })
      this.data = undefined
      this.event = ''
      return
    }
    if (line.charCodeAt(0) === 58 /* ':' */) return
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32) value = value.slice(1)
    if (field === 'data') this.data = this.data === undefined ? value : `${this.data}\n${value}`
    else if (field === 'event') this.event = value
  }
}

/** The length of the prefix of `bytes` that ends on a character boundary (at most 3 bytes of a cut character follow it). */
function completeLength(bytes: Uint8Array): number {
  const length = bytes.length
  let lead = length - 1
  while (lead >= 0 && length - lead <= 3 && (bytes[lead]! & 0xc0) === 0x80) lead--
  if (lead < 0) return length
  const byte = bytes[lead]!
  const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
  return lead + needed > length ? lead : length
}

/**
 * Decodes UTF-8 that arrives in arbitrary pieces, with the results of a streaming `TextDecoder` (malformed
 * bytes become U+FFFD; a leading byte-order mark is dropped, as the event-stream format requires) at a
 * fraction of its cost: each piece is decoded in one non-streaming call up to its last complete
 * character, and the bytes of a character cut at the end wait for the next piece.
 */
export class Utf8Pieces {
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  private held: Uint8Array | undefined
  private started = false

  push(bytes: Uint8Array): string {
    let input = bytes
    if (this.held) {
      input = new Uint8Array(this.held.length + bytes.length)
      input.set(this.held)
      input.set(bytes, this.held.length)
      this.held = undefined
    }
    const end = completeLength(input)
    if (end === input.length) return this.text(input)
    this.held = input.slice(end)
    return this.text(input.subarray(0, end))
  }

  /** The end of the input: a character still cut becomes U+FFFD. */
  end(): string {
    const held = this.held
    this.held = undefined
    return held ? this.text(held) : ''
  }

  private text(bytes: Uint8Array): string {
    if (!bytes.length) return ''
    const text = this.decoder.decode(bytes)
    if (this.started) return text
    this.started = true
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
}
