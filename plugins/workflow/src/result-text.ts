import type { JsonValue } from '@cordage/core'

/** The largest return value shown inline; the value itself is never cut. */
export const MAX_RESULT_CHARS = 50_000

/** Pretty JSON, cut at `MAX_RESULT_CHARS` with a note of how much was left out. */
export function resultText(result: JsonValue): string {
  const json = JSON.stringify(result, null, 2)
  if (json.length <= MAX_RESULT_CHARS) return json
  return `${json.slice(0, MAX_RESULT_CHARS)}\n… [truncated: ${json.length - MAX_RESULT_CHARS} more characters]`
}

/** `workflow` and `ralph` values share one shape. */
export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`
}
