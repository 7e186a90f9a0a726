// @ts-check
// A response body turned into what web_fetch returns: decoded by its charset, HTML converted to Markdown
// or text. Runs in the conversion worker (converter.ts), so the host never waits on a hostile page.
// Plain JavaScript: the worker imports it from src/ and dist/ alike.
import { TextDecoder } from 'node:util'
import { parseDocument } from './dom.js'
import { mainContent } from './extract.js'
import { toMarkdown } from './markdown.js'
import { streamText, textOf } from './text.js'

/**
 * What `web_fetch` returns the body as.
 * @typedef {'markdown' | 'text' | 'html'} FetchFormat
 */
/**
 * The body converted for the model, and the page title when it is HTML.
 * @typedef {{ content: string, title?: string }} Converted
 */
/**
 * How to convert one body.
 * @typedef {{ format: FetchFormat, baseUrl: string, readability: boolean }} ConvertOptions
 */

/** A failure the model sees, with the stable code the host reports it under. */
export class ConversionError extends Error {
  /**
   * @param {'WEB_UNSUPPORTED_CONTENT_TYPE' | 'WEB_UNSUPPORTED_CHARSET'} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message)
    this.code = code
  }
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|x-ndjson|ld\+json|rss\+xml|atom\+xml|x-yaml|yaml|toml|x-sh|sql|graphql)$)|\+(json|xml)$/
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml'])
// Past these a tree costs more memory than the text is worth, and the Markdown writer recurses per level,
// so the page's text is streamed from its markup instead.
const MAX_TREE_ELEMENTS = 100_000
const MAX_TREE_DEPTH = 256
const WINDOWS_1252 = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ'.split('').map((char) => (char === '\0' ? '' : char))

/**
 * Splits a Content-Type header into its media type and charset label.
 * @param {string} header
 * @returns {{ mediaType: string, charset?: string }}
 */
export function parseContentType(header) {
  const [type = '', ...params] = header.split(';')
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(param)?.[1]).find(Boolean)
  return { mediaType: type.trim().toLowerCase(), ...(charset && { charset }) }
}

/**
 * Guesses a type for a body served without one: HTML by its first tag, text if it decodes as UTF-8 without NULs.
 * @param {Buffer} body
 */
function sniff(body) {
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase()
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'text/html'
  if (body.includes(0)) return undefined
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, 4096))
    return 'text/plain'
  } catch {
    // A multi-byte character cut at the 4096-byte window is still text.
    return body.length > 4096 ? 'text/plain' : undefined
  }
}

/**
 * The charset of a body: its BOM, the header, an HTML `<meta>` declaration, else UTF-8.
 * @param {Buffer} body
 * @param {string | undefined} header
 * @param {boolean} html
 */
function charsetOf(body, header, html) {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8'
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le'
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be'
  if (header) return header
  if (html) {
    const head = body.subarray(0, 2048).toString('latin1')
    const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)
    if (meta?.[1]) return meta[1]
  }
  return 'utf-8'
}

/**
 * Decodes with the declared charset (bad bytes become U+FFFD); a label no decoder knows is refused.
 * @param {Buffer} body
 * @param {string} label
 */
function decode(body, label) {
  let decoder
  try {
    decoder = new TextDecoder(label)
  } catch {
    // Guessing would hand the model mojibake (or, for UTF-7, markup it cannot see) as if it were the page.
    throw new ConversionError(
      'WEB_UNSUPPORTED_CHARSET',
      `the response declares the charset ${JSON.stringify(label.slice(0, 40))}, which web_fetch cannot decode (it decodes the WHATWG encodings: UTF-8, UTF-16, ISO-8859-*, windows-125*, Shift_JIS, EUC-JP, EUC-KR, GBK, gb18030, Big5, KOI8 and the like)`,
    )
  }
  const text = decoder.decode(body)
  // Node 20 decodes windows-1252 (and the latin1 labels that mean it) as ISO-8859-1, leaving C1 controls where € and quotes belong.
  return decoder.encoding === 'windows-1252' ? text.replace(/[\x80-\x9f]/g, (char) => WINDOWS_1252[char.charCodeAt(0) - 0x80] || char) : text
}

/**
 * Converts HTML through its document tree: the main content (unless `readability` is off) as Markdown or
 * text; any failure in the converters falls back to the streamed text.
 * @param {string} html
 * @param {ConvertOptions} options
 * @returns {Converted}
 */
function convertHtml(html, options) {
  try {
    const parsed = parseDocument(html, { maxElements: MAX_TREE_ELEMENTS, maxDepth: MAX_TREE_DEPTH })
    // A page too large or too deep for a tree: its text is streamed from the markup.
    if (!parsed) return streamed(html)
    const { root, title } = parsed
    const whole = childNamed(childNamed(root, 'html') ?? root, 'body') ?? root
    const source = (options.readability && mainContent(whole)) || whole
    const content = options.format === 'text' ? textOf(source) : toMarkdown(source, { baseUrl: options.baseUrl })
    return { content, ...(title && { title }) }
  } catch {
    return streamed(html)
  }
}

/**
 * @param {import('./dom.js').Element} parent
 * @param {string} name
 * @returns {import('./dom.js').Element | undefined}
 */
function childNamed(parent, name) {
  for (const child of parent.children) if (typeof child !== 'string' && child.name === name) return child
  return undefined
}

/**
 * The text of a page too large or deep for a DOM.
 * @param {string} html
 * @returns {Converted}
 */
function streamed(html) {
  const { text, title } = streamText(html)
  return { content: text, ...(title && { title }) }
}

/**
 * Turns a response body into the requested format; non-text bodies and unknown charsets are refused.
 * @param {Buffer} body
 * @param {string} contentType
 * @param {ConvertOptions} options
 * @returns {Converted}
 */
export function convertBody(body, contentType, options) {
  const parsed = parseContentType(contentType)
  const mediaType = parsed.mediaType || sniff(body)
  if (!mediaType || (!HTML_TYPES.has(mediaType) && !TEXT_TYPES.test(mediaType))) {
    throw new ConversionError(
      'WEB_UNSUPPORTED_CONTENT_TYPE',
      `unsupported content type "${mediaType ?? 'unknown binary'}": web_fetch returns text, HTML, JSON and XML only (download binaries with bash, e.g. curl -o)`,
    )
  }
  const html = HTML_TYPES.has(mediaType)
  const text = decode(body, charsetOf(body, parsed.charset, html)).replace(/^\uFEFF/, '')
  if (!html || options.format === 'html') return { content: text }
  return convertHtml(text, options)
}
