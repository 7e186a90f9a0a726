import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff'
import type { JsonValue } from '@cordage/core'

/** Replayable presentation metadata for a file change: a unified diff plus line counts. */
export function changeMeta(path: string, before: string | null, after: string): JsonValue {
  const patch = structuredPatch(before === null ? '/dev/null' : `a/${path}`, `b/${path}`, before ?? '', after, undefined, undefined, { context: 3 })
  let additions = 0
  let deletions = 0
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) additions++
      else if (line.startsWith('-')) deletions++
    }
  }
  const diff = formatPatch(patch, FILE_HEADERS_ONLY)
  return { kind: 'diff', path, operation: before === null ? 'create' : 'update', diff, additions, deletions }
}

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
