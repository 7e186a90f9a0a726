import { utf8Head, utf8Tail } from '@cordage/process'

/** Sizes of a head/tail preview; `maxInlineBytes` bounds preview and notice together. */
export interface PreviewOptions {
  maxInlineBytes: number
  headBytes: number
  tailBytes: number
}

const SEPARATOR = '\n\n'

/** The notice that replaces the omitted middle of a spilled output. */
export function spillNotice(omittedBytes: number, path: string): string {
  return `(Omitted ${omittedBytes} bytes. Full output: ${path}. Read it with read offset/limit or grep.)`
}

/** Prefers a cut on a line boundary when one is near the end of the head (within its last quarter). */
function trimHeadToLine(head: string): string {
  const newline = head.lastIndexOf('\n')
  return newline >= 0 && newline >= head.length * 0.75 ? head.slice(0, newline) : head
}

/** Prefers a start on a line boundary when one is near the start of the tail (within its first quarter). */
function trimTailToLine(tail: string): string {
  const newline = tail.indexOf('\n')
  return newline >= 0 && newline < tail.length * 0.25 ? tail.slice(newline + 1) : tail
}

/**
 * Builds `head + notice + tail` for `text` (`totalBytes` long in UTF-8) saved at `path`. The result's
 * UTF-8 size is at most `maxInlineBytes`: head and tail shrink proportionally when the notice needs room.
 */
export function buildPreview(text: string, totalBytes: number, path: string, options: PreviewOptions): string {
  // Reserve the notice at its largest (the omitted count cannot have more digits than the total).
  const reserved = Buffer.byteLength(spillNotice(totalBytes, path)) + 2 * SEPARATOR.length
  const budget = Math.max(0, options.maxInlineBytes - reserved)
  let headBytes = options.headBytes
  let tailBytes = options.tailBytes
  if (headBytes + tailBytes > budget) {
    const scale = budget / (headBytes + tailBytes)
    headBytes = Math.floor(headBytes * scale)
    tailBytes = Math.floor(tailBytes * scale)
  }
  const head = trimHeadToLine(utf8Head(text, headBytes))
  const tail = trimTailToLine(utf8Tail(text, tailBytes))
  const omitted = totalBytes - Buffer.byteLength(head) - Buffer.byteLength(tail)
  const notice = spillNotice(omitted, path)
  return (head ? head + SEPARATOR : '') + notice + (tail ? SEPARATOR + tail : '')
}
