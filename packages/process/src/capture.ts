import { TextDecoder } from 'node:util'

/** How a head/tail window cuts and keeps chunks of one kind (strings or Buffers). */
interface ChunkKind<Chunk> {
  /** `chunk` from `start` to `end`, sharing memory where it can. */
  slice(chunk: Chunk, start: number, end?: number): Chunk
  /** A copy that owns its memory, so a kept piece never pins the larger chunk it came from. */
  own(chunk: Chunk): Chunk
}

/**
 * A bounded window over a stream of chunks: the first `headLimit` units are kept for good, then a
 * rolling tail of at most `tailLimit` units. What falls between is counted, not stored, so memory stays
 * bounded whatever the volume, and absolute positions never shift because of it.
 */
export class HeadTail<Chunk extends { readonly length: number }> {
  protected readonly head: Chunk[] = []
  protected headLength = 0
  protected readonly tail: Chunk[] = []
  protected tailLength = 0
  /** Absolute position of the first unit the tail keeps. */
  protected tailStart = 0
  /** Units ever pushed: the absolute position of the next one. */
  end = 0

  constructor(
    readonly headLimit: number,
    readonly tailLimit: number,
    private readonly kind: ChunkKind<Chunk>,
  ) {
    if (!(headLimit >= 0) || !(tailLimit >= 0)) throw new RangeError('head and tail limits must be non-negative numbers')
  }

  /** Units counted but no longer kept (between the head and the tail). */
  get omitted(): number {
    return this.end - this.headLength - this.tailLength
  }

  push(chunk: Chunk): void {
    if (!chunk.length) return
    let rest = chunk
    if (this.end < this.headLimit) {
      const taken = this.kind.own(this.kind.slice(rest, 0, this.headLimit - this.end))
      this.head.push(taken)
      this.headLength += taken.length
      this.end += taken.length
      if (taken.length === rest.length) return
      rest = this.kind.slice(rest, taken.length)
    }
    if (!this.tail.length) this.tailStart = this.end
    this.end += rest.length
    if (this.tailLimit === 0) {
      this.tailStart = this.end
      return
    }
    this.tail.push(rest)
    this.tailLength += rest.length
    while (this.tailLength > this.tailLimit) {
      const excess = this.tailLength - this.tailLimit
      const first = this.tail[0]!
      if (first.length <= excess) {
        this.tail.shift()
        this.tailLength -= first.length
        this.tailStart += first.length
      } else {
        this.tail[0] = this.kind.own(this.kind.slice(first, excess))
        this.tailLength -= excess
        this.tailStart += excess
      }
    }
  }

  /** Whether units are missing between the head and the tail. */
  protected get gap(): boolean {
    return this.tail.length > 0 && this.tailStart > this.headLength
  }

  /** The kept pieces covering absolute positions `from` to `to` (which must lie in the head or the tail). */
  protected span(from: number, to: number): Chunk[] {
    const parts: Chunk[] = []
    const collect = (chunks: Chunk[], start: number) => {
      let position = start
      for (const chunk of chunks) {
        if (position >= to) break
        const chunkEnd = position + chunk.length
        if (chunkEnd > from) parts.push(this.kind.slice(chunk, Math.max(0, from - position), Math.min(chunk.length, to - position)))
        position = chunkEnd
      }
    }
    if (to > from) {
      collect(this.head, 0)
      collect(this.tail, this.tailStart)
    }
    return parts
  }
}

/** For whole decodes only (no `stream: true`), which keep no state between calls. */
const utf8 = new TextDecoder()

const bufferKind: ChunkKind<Buffer> = {
  slice: (chunk, start, end) => chunk.subarray(start, end),
  own: (chunk) => Buffer.from(chunk),
}

const stringKind: ChunkKind<string> = {
  slice: (chunk, start, end) => chunk.slice(start, end),
  own: (chunk) => chunk,
}

/**
 * Bounded capture of one output stream in bytes: the first `headBytes` and a rolling window of the last
 * `tailBytes`, decoded as UTF-8 when read.
 */
export class ByteCapture extends HeadTail<Buffer> {
  constructor(headBytes: number, tailBytes: number) {
    super(headBytes, tailBytes, bufferKind)
  }

  /** Every byte pushed so far while none was omitted (a caller keeping the whole stream starts from it). */
  complete(): Buffer | undefined {
    return this.omitted === 0 ? Buffer.concat([...this.head, ...this.tail]) : undefined
  }

  /**
   * The captured text. When bytes were omitted, head and tail are cut at UTF-8 character boundaries and
   * joined by a line `[… N bytes omitted …]` (N counts every byte not shown, including split characters).
   */
  text(): { text: string; omitted: number } {
    if (this.end === 0) return { text: '', omitted: 0 }
    const head = Buffer.concat(this.head)
    const tail = Buffer.concat(this.tail)
    if (this.omitted === 0) return { text: utf8.decode(tail.length ? Buffer.concat([head, tail]) : head), omitted: 0 }
    // A streaming decode withholds an incomplete trailing character instead of emitting U+FFFD.
    const headText = new TextDecoder().decode(head, { stream: true })
    let skip = 0
    while (skip < tail.length && skip < 3 && (tail[skip]! & 0xc0) === 0x80) skip++
    const tailText = utf8.decode(tail.subarray(skip))
    const omitted = this.end - Buffer.byteLength(headText) - Buffer.byteLength(tailText)
    const before = headText && !headText.endsWith('\n') ? '\n' : ''
    return { text: `${headText}${before}[… ${omitted} bytes omitted …]\n${tailText}`, omitted }
  }
}

/** Where one read of a {@link TextLog} landed: `offset` is the absolute start of `text`; `dropped` counts characters skipped before it. */
export interface TextRead {
  offset: number
  text: string
  dropped: number
}

/** A bounded text log addressed by absolute character offsets (a head kept for good, a rolling tail). */
export class TextLog extends HeadTail<string> {
  constructor(headChars: number, tailChars: number) {
    if (!(tailChars >= 1)) throw new RangeError('tailChars must be at least 1')
    super(headChars, tailChars, stringKind)
  }

  /** Characters no longer kept (between the head and the retained tail). */
  get dropped(): number {
    return this.omitted
  }

  append(text: string): void {
    this.push(text)
  }

  /**
   * Reads at most `max` characters from `offset` (which must be ≤ `end`). A read returns one contiguous
   * span: it stops at the end of the head when a gap follows, and an offset inside the gap jumps to the
   * oldest retained character, reporting how many were skipped.
   */
  read(offset: number, max: number): TextRead {
    if (offset < this.headLength) {
      const stop = Math.min(offset + max, this.gap ? this.headLength : this.end)
      return { offset, text: this.span(offset, stop).join(''), dropped: 0 }
    }
    const start = Math.max(offset, this.tail.length ? this.tailStart : this.end)
    return { offset: start, text: this.span(start, Math.min(start + max, this.end)).join(''), dropped: start - offset }
  }
}
