/** Joins rendered items until `pageSize` items or `pageBytes` bytes; returns the text and how many were shown. */
export function takePage(items: readonly string[], pageSize: number, pageBytes: number): { text: string; shown: number } {
  let text = ''
  let bytes = 0
  let shown = 0
  for (const item of items) {
    if (shown >= pageSize) break
    const size = Buffer.byteLength(item) + 1
    if (shown > 0 && bytes + size > pageBytes) break
    text += (shown ? '\n' : '') + item
    bytes += size
    shown++
  }
  return { text, shown }
}

/** The footer of a paged list: what was shown, whether the cap stopped acquisition, where the rest is. */
export function pageFooter(shown: number, total: number, noun: string, truncated: boolean, max: number, spilled?: string): string {
  const notes: string[] = []
  if (shown < total) notes.push(`Showing ${shown} of ${total} ${noun}.`)
  if (truncated) notes.push(`Stopped at the limit of ${max} ${noun}; there are more. Narrow the pattern or path.`)
  if (spilled) notes.push(`Full list: ${spilled} (read it with read offset/limit or grep).`)
  else if (shown < total && !truncated) notes.push('Narrow the pattern or path to see the rest.')
  return notes.length ? `\n\n(${notes.join(' ')})` : ''
}
