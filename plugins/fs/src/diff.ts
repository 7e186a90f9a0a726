import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatchHunk } from 'diff'
import type { JsonValue } from '@cordage/core'

// A line diff costs time in proportion to the lines of both texts times the lines it changes (Myers):
// rewriting a 1 MB file of 15 000 lines took minutes. This much work is allowed before the change is
// described as a whole-file replacement instead (still a correct diff, not the smallest one).
const DIFF_WORK = 5_000_000
const MAX_EDIT_LENGTH = 5_000
const NO_NEWLINE = '\\ No newline at end of file'

/**
 * Replayable presentation metadata for a file change: a unified diff of at most `maxBytes` (whole hunks
 * first; `truncated` when some were left out) plus the counts of added and deleted lines of the whole
 * change. A change too large to diff line by line within a fixed amount of work is described as a
 * whole-file replacement (`minimal: false`).
 */
export function changeMeta(path: string, before: string | null, after: string, maxBytes: number): JsonValue {
  const oldFileName = before === null ? '/dev/null' : `a/${path}`
  const newFileName = `b/${path}`
  const oldLines = lineCount(before ?? '')
  const newLines = lineCount(after)
  const patch =
    before === null || before === ''
      ? undefined
      : structuredPatch(oldFileName, newFileName, before, after, undefined, undefined, {
          context: 3,
          maxEditLength: Math.max(100, Math.min(MAX_EDIT_LENGTH, Math.floor(DIFF_WORK / (oldLines + newLines + 1)))),
        })
  let additions = newLines
  let deletions = oldLines
  let hunks: StructuredPatchHunk[]
  if (patch) {
    ;[additions, deletions] = [0, 0]
    for (const hunk of patch.hunks) {
      for (const line of hunk.lines) {
        if (line.startsWith('+')) additions++
        else if (line.startsWith('-')) deletions++
      }
    }
    hunks = patch.hunks
  } else hunks = newLines + oldLines === 0 ? [] : [replacementHunk(before ?? '', after, maxBytes)]
  const header = formatPatch({ oldFileName, newFileName, oldHeader: undefined, newHeader: undefined, hunks: [] }, FILE_HEADERS_ONLY)
  const { kept, truncated } = boundHunks(hunks, maxBytes - Buffer.byteLength(header))
  const diff = formatPatch({ oldFileName, newFileName, oldHeader: undefined, newHeader: undefined, hunks: kept }, FILE_HEADERS_ONLY)
  // A replacement hunk may already hold only the leading lines of each side.
  const cut = truncated || (!patch && hunks.length > 0 && (hunks[0]!.oldLines !== oldLines || hunks[0]!.newLines !== newLines))
  return {
    kind: 'diff',
    path,
    operation: before === null ? 'create' : 'update',
    diff,
    additions,
    deletions,
    ...(cut && { truncated: true }),
    ...(!patch && before !== null && before !== '' && { minimal: false }),
  }
}

/** One hunk replacing every old line by every new one, its two halves cut to about `maxBytes` each side (the rest is never split into lines). */
function replacementHunk(before: string, after: string, maxBytes: number): StructuredPatchHunk {
  const removed = leadingLines(before, '-', maxBytes / 2)
  const added = leadingLines(after, '+', maxBytes - bytesOf(removed))
  // Starts are 1 even for an empty side: the unified format prints such a side as 0,0.
  return { oldStart: 1, oldLines: countOf(removed, '-'), newStart: 1, newLines: countOf(added, '+'), lines: [...removed, ...added] }
}

/** The first lines of `text` prefixed with `sign`, within `budget` bytes, marked when the text's last line has no newline. */
function leadingLines(text: string, sign: string, budget: number): string[] {
  const lines: string[] = []
  let used = 0
  for (let start = 0; start < text.length;) {
    const newline = text.indexOf('\n', start)
    const line = sign + text.slice(start, newline === -1 ? text.length : newline)
    used += Buffer.byteLength(line) + 1
    if (used > budget) break
    lines.push(line)
    if (newline === -1) {
      lines.push(NO_NEWLINE)
      break
    }
    start = newline + 1
  }
  return lines
}

/** Whole hunks while they fit `budget` bytes; the first one cut to what fits when even it does not. */
function boundHunks(hunks: StructuredPatchHunk[], budget: number): { kept: StructuredPatchHunk[]; truncated: boolean } {
  const kept: StructuredPatchHunk[] = []
  let used = 0
  for (const hunk of hunks) {
    const size = bytesOf(hunk.lines) + 40
    if (used + size <= budget) {
      kept.push(hunk)
      used += size
      continue
    }
    if (kept.length === 0) kept.push(cutHunk(hunk, budget - 40))
    return { kept, truncated: true }
  }
  return { kept, truncated: false }
}

/** The leading lines of `hunk` within `budget` bytes, with its line counts recounted to match. */
function cutHunk(hunk: StructuredPatchHunk, budget: number): StructuredPatchHunk {
  const lines: string[] = []
  let used = 0
  for (const line of hunk.lines) {
    if ((used += Buffer.byteLength(line) + 1) > budget) break
    lines.push(line)
  }
  const oldLines = lines.filter((line) => line[0] === ' ' || line[0] === '-').length
  const newLines = lines.filter((line) => line[0] === ' ' || line[0] === '+').length
  return { ...hunk, oldLines, newLines, lines }
}

const bytesOf = (lines: readonly string[]) => lines.reduce((total, line) => total + Buffer.byteLength(line) + 1, 0)
const countOf = (lines: readonly string[], sign: string) => lines.filter((line) => line[0] === sign).length

/** Counts lines the way editors do (a trailing newline does not start a new line). */
export function lineCount(text: string): number {
  if (text === '') return 0
  let count = 1
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) count++
  return text.endsWith('\n') ? count - 1 : count
}

/** Whether most line breaks in `text` are CRLF. */
export function usesCrlf(text: string): boolean {
  const crlf = text.split('\r\n').length - 1
  const lf = text.split('\n').length - 1
  return crlf > 0 && crlf * 2 >= lf
}

/** `1 line`, `2 lines`. */
export function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`
}
