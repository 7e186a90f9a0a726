/** Where one read landed: `offset` is the absolute start of `text`; `dropped` counts characters skipped before it. */
export interface BufferRead {
  offset: number
  text: string
  dropped: number
}

/**
 * A bounded output log addressed by absolute character offsets: the first `headLimit` characters are
 * kept for good, then a rolling tail of at most `tailLimit` characters. What falls between the two is
 * dropped, and offsets never shift because of it.
 */
export class OutputBuffer {
  private head = ''
  private tail: string[] = []
  private tailLength = 0
  private tailStart = 0
  /** Total characters ever appended: the absolute offset of the next character. */
  end = 0

  constructor(
    readonly headLimit: number,
    readonly tailLimit: number,
  ) {
    if (!(tailLimit >= 1)) throw new RangeError('tailLimit must be at least 1')
  }

  /** Characters no longer kept (between the head and the retained tail). */
  get dropped(): number {
    return this.tail.length ? this.tailStart - this.head.length : 0
  }

  append(text: string): void {
    if (!text) return
    let rest = text
    if (this.end < this.headLimit) {
      const taken = rest.slice(0, this.headLimit - this.end)
      this.head += taken
      this.end += taken.length
      rest = rest.slice(taken.length)
    }
    if (!rest) return
    if (!this.tail.length) this.tailStart = this.end
    this.tail.push(rest)
    this.tailLength += rest.length
    this.end += rest.length
    while (this.tailLength > this.tailLimit) {
      const excess = this.tailLength - this.tailLimit
      const first = this.tail[0]!
      if (first.length <= excess) {
        this.tail.shift()
        this.tailLength -= first.length
        this.tailStart += first.length
      } else {
        this.tail[0] = first.slice(excess)
        this.tailLength -= excess
        this.tailStart += excess
      }
    }
  }

  /**
   * Reads at most `max` characters from `offset` (which must be ≤ `end`). A read returns one contiguous
   * span: it stops at the end of the head when a gap follows, and an offset inside the gap jumps to the
   * oldest retained character, reporting how many were skipped.
   */
  read(offset: number, max: number): BufferRead {
    if (offset < this.head.length) {
      const limit = this.tail.length && this.tailStart > this.head.length ? this.head.length : this.end
      const stop = Math.min(offset + max, limit)
      const fromHead = this.head.slice(offset, Math.min(stop, this.head.length))
      const fromTail = stop > this.head.length ? this.tailSlice(this.head.length, stop) : ''
      return { offset, text: fromHead + fromTail, dropped: 0 }
    }
    const start = Math.max(offset, this.tail.length ? this.tailStart : this.end)
    return { offset: start, text: this.tailSlice(start, Math.min(start + max, this.end)), dropped: start - offset }
  }

  private tailSlice(from: number, to: number): string {
    if (to <= from) return ''
    const parts: string[] = []
    let position = this.tailStart
    for (const chunk of this.tail) {
      const chunkEnd = position + chunk.length
      if (chunkEnd > from) parts.push(chunk.slice(Math.max(0, from - position), Math.min(chunk.length, to - position)))
      position = chunkEnd
      if (position >= to) break
    }
    return parts.join('')
  }
}
