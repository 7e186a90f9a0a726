import { StringDecoder } from 'node:string_decoder'

/** One line of a child's output: its first bytes (up to the splitter's `keep`), its full length and its last byte. */
export interface OutputLine {
  head: Buffer
  length: number
  last: number
}

/**
 * Splits a byte stream into lines on `\n` without holding more than `keep` bytes of any one line: a
 * search through minified bundles prints lines of megabytes, of which only the start is ever shown.
 * Empty lines are skipped.
 */
export class LineSplitter {
  private parts: Buffer[] = []
  private kept = 0
  private length = 0
  private last = -1

  constructor(
    private readonly keep: number,
    private readonly onLine: (line: OutputLine) => boolean,
  ) {}

  /** Feeds a chunk; false once `onLine` asked to stop. */
  push(chunk: Buffer): boolean {
    for (let start = 0; ;) {
      const newline = chunk.indexOf(10, start)
      this.append(chunk, start, newline === -1 ? chunk.length : newline)
      if (newline === -1) return true
      if (!this.emit()) return false
      start = newline + 1
    }
  }

  /** Emits an unterminated last line. */
  end(): void {
    this.emit()
  }

  private append(chunk: Buffer, start: number, end: number): void {
    if (end === start) return
    this.length += end - start
    this.last = chunk[end - 1]!
    if (this.kept >= this.keep) return
    const piece = chunk.subarray(start, Math.min(end, start + this.keep - this.kept))
    this.parts.push(piece)
    this.kept += piece.length
  }

  private emit(): boolean {
    const line = { head: this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts), length: this.length, last: this.last }
    this.parts = []
    this.kept = 0
    this.length = 0
    this.last = -1
    return line.length === 0 || this.onLine(line)
  }
}

/**
 * Splits `rg --files` output into paths, a chunk at a time: paths are short (a few hundred bytes), so
 * each chunk is decoded once and split, rather than kept as one buffer per line. Empty lines are skipped.
 */
export class PathLines {
  private readonly decoder = new StringDecoder('utf8')
  private rest = ''

  constructor(private readonly onLines: (lines: string[]) => boolean) {}

  /** Feeds a chunk; false once `onLines` asked to stop. */
  push(chunk: Buffer): boolean {
    const text = this.rest + this.decoder.write(chunk)
    const newline = text.lastIndexOf('\n')
    if (newline === -1) {
      this.rest = text
      return true
    }
    this.rest = text.slice(newline + 1)
    const lines = text.slice(0, newline).split('\n').filter(Boolean)
    return lines.length === 0 || this.onLines(lines)
  }

  /** Emits an unterminated last line. */
  end(): void {
    const last = this.rest + this.decoder.end()
    this.rest = ''
    if (last) this.onLines([last])
  }
}
