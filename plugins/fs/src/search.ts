/** A `glob` query: files under `cwd` (an opened directory, see `SearchRoot`) matching `pattern`. */
export interface GlobQuery {
  cwd: string
  /** The real path of `cwd`, for the ignore rules of its ancestors. */
  realCwd: string
  pattern: string
  max: number
  signal: AbortSignal
  /** Called with collected paths as the search finds them (to check them meanwhile). */
  onItems?: (paths: readonly string[]) => void
}

/** A `grep` query over a real directory (`cwd`, ignore rules apply) or one file (`file`). */
export interface GrepQuery {
  cwd: string
  /** The real path of `cwd`, for the ignore rules of its ancestors. */
  realCwd: string
  file?: string
  pattern: string
  glob?: string
  caseInsensitive: boolean
  context: number
  max: number
  maxLineLength: number
  signal: AbortSignal
  /** Called with each file's collected matches (context attached) as the search finishes the file. */
  onItems?: (matches: readonly FoundMatch[]) => void
}

/** A context line next to a match. */
export interface ContextLine {
  lineNumber: number
  line: string
}

/** One match; `path` is relative to the query's `cwd` (or the absolute `file`). */
export interface FoundMatch {
  path: string
  lineNumber: number
  line: string
  before?: ContextLine[]
  after?: ContextLine[]
}

/** What a search engine collected; `truncated` when the `max` cap stopped it. */
export interface Found<T> {
  items: T[]
  truncated: boolean
}

/** Cuts a line to `max` characters, marking the cut with its length in bytes (`bytes`), as `read` does. */
export function clipLine(line: string, max: number, bytes: number): string {
  return line.length > max ? `${line.slice(0, max)} … [line truncated: ${bytes} bytes in total]` : line
}

/** How many bytes of a line always decode to more than `max` characters (a character takes at most 4): all a clipped line needs. */
export function clipBytes(max: number): number {
  return max * 4 + 4
}

/**
 * The UTF-8 text of `data` from `start` to `end`, decoded only as far as a clipped line shows: the whole
 * text when it has at most `max` characters, else a prefix longer than `max`. Mostly-ASCII lines (minified
 * bundles) need `max + 2` bytes, not the `clipBytes` a line of 4-byte characters would.
 */
export function clippedText(data: Buffer, start: number, end: number, max: number): string {
  const quick = start + max + 2
  if (end > quick) {
    const text = data.toString('utf8', start, quick)
    // Only the last character can be cut (decoded as U+FFFD): everything before it is exact.
    if (text.length - 1 > max) return text.slice(0, -1)
  }
  return data.toString('utf8', start, Math.min(end, start + clipBytes(max)))
}

/** Attaches the context lines within `context` of each match (shared by both engines so their values agree). */
export function attachContext(matches: FoundMatch[], contextLines: ContextLine[], context: number): void {
  if (context === 0) return
  for (const match of matches) {
    match.before = contextLines.filter((c) => c.lineNumber < match.lineNumber && c.lineNumber >= match.lineNumber - context)
    match.after = contextLines.filter((c) => c.lineNumber > match.lineNumber && c.lineNumber <= match.lineNumber + context)
  }
}

/** Sorts by path, then line: both engines return the same order whatever their traversal order. */
export function compareMatches(a: FoundMatch, b: FoundMatch): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.lineNumber - b.lineNumber
}
