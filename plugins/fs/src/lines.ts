import type { FileHandle } from 'node:fs/promises'
import { CHUNK, type LineStart } from './line-index.js'

/** One numbered line (1-based) without its terminator. */
export interface Line {
  number: number
  text: string
}

/** Bounds on what one `readLines` call keeps. */
export interface LineWindowOptions {
  /** 1-based number of the first line to keep. */
  offset: number
  /** How many lines to keep at most. */
  limit: number
  /** Budget for kept lines, counted as rendered bytes (text + a 7-byte number column). */
  maxBytes: number
  /** Longer lines are cut to this many characters and marked. */
  maxLineLength: number
  /** Keep only these line numbers (within the window). */
  only?: ReadonlySet<number>
  signal?: AbortSignal
  /** Start reading here instead of at the first byte (a chunk boundary from a line index, before the window). */
  from?: LineStart
  /** Stop once the window is complete: `totalLines` is then only what was read (the caller knows the real count). */
  untilWindow?: boolean
}

/** The kept window, the file's line count, or a binary verdict. */
export type LineWindow = { binary: true } | { binary: false; lines: Line[]; totalLines: number }

const NUMBER_COLUMN = 7

/**
 * Streams a file once with a fixed 1 MiB buffer: keeps the lines of the window (bounded by count, bytes
 * and line length) and counts every line. Memory stays O(window), whatever the file size. A NUL byte in
 * the first 8 000 bytes makes the file binary (the heuristic git uses). The caller owns `handle`.
 */
export async function readLines(handle: FileHandle, options: LineWindowOptions): Promise<LineWindow> {
  const { offset, limit, maxBytes, maxLineLength, only, signal, from, untilWindow } = options
  const keepLimit = maxLineLength * 4 + 4
  const buffer = Buffer.allocUnsafe(CHUNK)
  const lines: Line[] = []
  // Mid-line at a chunk boundary: that line's number is linesBefore + 1, and it is before the window.
  let total = from?.linesBefore ?? 0
  let position = from?.position ?? 0
  let used = 0
  let collecting = limit > 0
  let pieces: Buffer[] = []
  let pieceBytes = 0
  let lastByte = -1
  let first = position === 0
  const keep = (piece: Buffer) => {
    // The buffer is reused: copy what is kept, and only as much as can ever be shown.
    if (pieceBytes < keepLimit) pieces.push(Buffer.from(piece.subarray(0, keepLimit - pieceBytes)))
    pieceBytes += piece.length
  }
  const finish = (number: number) => {
    let text = (pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)).toString('utf8')
    const fullBytes = pieceBytes
    pieces = []
    pieceBytes = 0
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.length > maxLineLength) text = `${text.slice(0, maxLineLength)} … [line truncated: ${fullBytes} bytes in total]`
    const cost = Buffer.byteLength(text) + NUMBER_COLUMN
    if (lines.length > 0 && used + cost > maxBytes) {
      collecting = false
      return
    }
    used += cost
    lines.push({ number, text })
    if (lines.length >= limit) collecting = false
  }
  for (;;) {
    if (signal?.aborted) throw signal.reason
    if (untilWindow && !collecting) return { binary: false, lines, totalLines: total }
    const { bytesRead } = await handle.read(buffer, 0, CHUNK, position)
    if (bytesRead === 0) break
    position += bytesRead
    const chunk = bytesRead === CHUNK ? buffer : buffer.subarray(0, bytesRead)
    if (first) {
      first = false
      if (chunk.subarray(0, 8000).includes(0)) return { binary: true }
    }
    lastByte = chunk[bytesRead - 1]!
    let start = 0
    let newline: number
    // `finish` closes the window (collecting = false) when a bound is reached.
    for (;;) {
      if (!collecting) break
      newline = chunk.indexOf(10, start)
      const inWindow = total + 1 >= offset && (!only || only.has(total + 1))
      if (newline === -1) {
        if (inWindow) keep(chunk.subarray(start))
        start = bytesRead
        break
      }
      if (inWindow) {
        keep(chunk.subarray(start, newline))
        finish(total + 1)
      }
      total++
      start = newline + 1
    }
    // Outside the window only newlines are counted.
    while ((newline = chunk.indexOf(10, start)) !== -1) {
      total++
      start = newline + 1
    }
  }
  if (lastByte !== -1 && lastByte !== 10) {
    if (collecting && total + 1 >= offset && (!only || only.has(total + 1))) finish(total + 1)
    total++
  }
  return { binary: false, lines, totalLines: total }
}
