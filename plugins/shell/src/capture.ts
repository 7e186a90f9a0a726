import { TextDecoder } from 'node:util'

/**
 * Bounded capture of one output stream: keeps the first `headBytes` and a rolling window of the last
 * `tailBytes`, counting (not storing) everything in between, so memory stays bounded whatever the volume.
 */
export class StreamCapture {
  private readonly head: Buffer[] = []
  private headLength = 0
  private readonly tail: Buffer[] = []
  private tailLength = 0
  /** Total bytes seen. */
  total = 0

  constructor(
    readonly headBytes: number,
    readonly tailBytes: number,
  ) {}

  push(chunk: Buffer): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headLength < this.headBytes) {
      // Copy so the head never pins a whole (possibly 64 KiB) stream chunk.
      const taken = Buffer.from(rest.subarray(0, this.headBytes - this.headLength))
      this.head.push(taken)
      this.headLength += taken.length
      rest = rest.subarray(taken.length)
    }
    if (!rest.length || this.tailBytes === 0) return
    this.tail.push(rest)
    this.tailLength += rest.length
    while (this.tailLength > this.tailBytes) {
      const excess = this.tailLength - this.tailBytes
      const first = this.tail[0]!
      if (first.length <= excess) {
        this.tail.shift()
        this.tailLength -= first.length
      } else {
        this.tail[0] = Buffer.from(first.subarray(excess))
        this.tailLength -= excess
      }
    }
  }

  /** Bytes counted but not kept. */
  get omitted(): number {
    return this.total - this.headLength - this.tailLength
  }

  /**
   * The captured text. When bytes were omitted, head and tail are cut at UTF-8 character boundaries and
   * joined by a line `[… N bytes omitted …]` (N counts every byte not shown, including split characters).
   */
  text(): { text: string; omitted: number } {
    const head = Buffer.concat(this.head)
    const tail = Buffer.concat(this.tail)
    if (this.omitted === 0) return { text: new TextDecoder().decode(Buffer.concat([head, tail])), omitted: 0 }
    // A streaming decode withholds an incomplete trailing character instead of emitting U+FFFD.
    const headText = new TextDecoder().decode(head, { stream: true })
    let skip = 0
    while (skip < tail.length && skip < 3 && (tail[skip]! & 0xc0) === 0x80) skip++
    const tailText = new TextDecoder().decode(tail.subarray(skip))
    const omitted = this.total - Buffer.byteLength(headText) - Buffer.byteLength(tailText)
    const before = headText && !headText.endsWith('\n') ? '\n' : ''
    return { text: `${headText}${before}[… ${omitted} bytes omitted …]\n${tailText}`, omitted }
  }
}
