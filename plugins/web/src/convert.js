// @ts-check
// A response body turned into what web_fetch returns: decoded by its charset, HTML converted to Markdown
// or text. Runs in the conversion worker (converter.ts), so the host never waits on a hostile page.
// Plain JavaScript: the worker imports it from src/ and dist/ alike.
import { TextDecoder } from 'node:util'
import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'
import TurndownService from 'turndown'
import { HIDDEN, streamText, textOf, tidyText } from './text.js'
import { measureHtml } from './tokens.js'

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
// Past these a DOM, Readability and turndown cost seconds and hundreds of megabytes (and they recurse per
// level), so the page's text is streamed from its markup instead.
const MAX_DOM_ELEMENTS = 20_000
const MAX_DOM_DEPTH = 256
// Readability costs seconds on huge documents; past the element cap it throws before touching the page.
const MAX_READABILITY_ELEMENTS = 10_000
const WINDOWS_1252 = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ'.split('').map((char) => (char === '\0' ? '' : char))
const STRIP = [...HIDDEN].join(', ')

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' })
// Inline data: images can be megabytes of base64 that say nothing to the model.
turndown.addRule('drop-data-images', {
  filter: (node) => node.nodeName === 'IMG' && /^data:/i.test(node.getAttribute('src') ?? ''),
  replacement: () => '',
})

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
 * Converts HTML through a DOM (Readability, turndown); any failure in the converters falls back to plain text.
 * @param {string} html
 * @param {ConvertOptions} options
 * @returns {Converted}
 */
function convertHtml(html, options) {
  let { document } = parseHTML(html)
  // linkedom roots a fragment (`<p>…</p>` with no <html>) at its first element and puts an empty body inside it.
  if (document.documentElement?.nodeName !== 'HTML') document = parseHTML(`<!doctype html><html><body>${html}</body></html>`).document
  const title = tidyText(document.title ?? '') || undefined
  /** @param {string} content @returns {Converted} */
  const withTitle = (content) => ({ content, ...(title && { title }) })
  for (const node of document.querySelectorAll(STRIP)) node.remove()
  // Links and images become absolute so the model can fetch what a page points to.
  for (const node of document.querySelectorAll('a[href], img[src]')) {
    const attribute = node.nodeName === 'A' ? 'href' : 'src'
    try {
      node.setAttribute(attribute, new URL(node.getAttribute(attribute) ?? '', options.baseUrl).href)
    } catch {
      // Left as written.
    }
  }
  /** @type {any} */
  let source = document.body ?? document.documentElement
  if (options.readability) {
    try {
      const article = new Readability(/** @type {any} */ (document), { maxElemsToParse: MAX_READABILITY_ELEMENTS }).parse()
      // Converting linkedom nodes directly is faster than handing turndown a string for its own parser.
      if (article?.content && article.textContent?.trim()) source = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body
    } catch {
      // The whole body is converted instead.
    }
  }
  try {
    return withTitle(options.format === 'text' ? textOf(source) : turndown.turndown(source).trim())
  } catch {
    return withTitle(textOf(source))
  }
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
  // Measured first, in one linear pass: a page too large or too deep for a DOM never gets one.
  if (measureHtml(text, { maxElements: MAX_DOM_ELEMENTS, maxDepth: MAX_DOM_DEPTH }).over) return streamed(text)
  return convertHtml(text, options)
}
