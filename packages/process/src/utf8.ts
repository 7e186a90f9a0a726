const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** The longest prefix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function utf8Head(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return ''
  // Every UTF-16 unit encodes to at least one byte, so `maxBytes` units always cover the answer.
  let slice = text.slice(0, maxBytes)
  if (slice.length < text.length && isHighSurrogate(slice.charCodeAt(slice.length - 1))) slice = slice.slice(0, -1)
  const bytes = Buffer.from(slice, 'utf8')
  if (bytes.length <= maxBytes) return slice
  let cut = maxBytes
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--
  return bytes.toString('utf8', 0, cut)
}

/** The longest suffix of `text` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function utf8Tail(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return ''
  let slice = text.length > maxBytes ? text.slice(text.length - maxBytes) : text
  if (slice.length < text.length && isLowSurrogate(slice.charCodeAt(0))) slice = slice.slice(1)
  const bytes = Buffer.from(slice, 'utf8')
  if (bytes.length <= maxBytes) return slice
  let start = bytes.length - maxBytes
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++
  return bytes.toString('utf8', start)
}
