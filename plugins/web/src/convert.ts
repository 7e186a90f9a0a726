import { TextDecoder } from 'node:util'
import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'
import TurndownService from 'turndown'
import { WebError } from './errors.js'
import { maxDepth, textOf, tidyText, type DomNode } from './text.js'

/** What `web_fetch` returns the body as. */
export type FetchFormat = 'markdown' | 'text' | 'html'

/** The body converted for the model, and the page title when it is HTML. */
export interface Converted {
  content: string
  title?: string
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|x-ndjson|ld\+json|rss\+xml|atom\+xml|x-yaml|yaml|toml|x-sh|sql|graphql)$)|\+(json|xml)$/
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml'])
// Elements whose content is never readable text (and may be huge: inline scripts, SVG paths, data URIs).
const MAX_DEPTH = 256
const MAX_READABILITY_ELEMENTS = 10_000
const WINDOWS_1252 = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ'.split('').map((char) => (char === '\0' ? '' : char))
const STRIP = 'script, style, noscript, template, iframe, svg, canvas, object, embed, link, meta'

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*' })
// Inline data: images can be megabytes of base64 that say nothing to the model.
turndown.addRule('drop-data-images', {
  filter: (node) => node.nodeName === 'IMG' && /^data:/i.test(node.getAttribute('src') ?? ''),
  replacement: () => '',
})

/** Splits a Content-Type header into its media type and charset label. */
export function parseContentType(header: string): { mediaType: string; charset?: string } {
  const [type = '', ...params] = header.split(';')
  const charset = params.map((param) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(param)?.[1]).find(Boolean)
  return { mediaType: type.trim().toLowerCase(), ...(charset && { charset }) }
}

/** Guesses a type for a body served without one: HTML by its first tag, text if it decodes as UTF-8 without NULs. */
function sniff(body: Buffer): string | undefined {
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase()
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'text/html'
  if (body.includes(0)) return undefined
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, 4096))
    return 'text/plain'
  } catch (error) {
    // A multi-byte character cut at the 4096-byte window is still text.
    return body.length > 4096 ? 'text/plain' : (void error, undefined)
  }
}

/** The charset of a body: its BOM, the header, an HTML `<meta>` declaration, else UTF-8. */
function charsetOf(body: Buffer, header: string | undefined, html: boolean): string {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8'
  if (body[0] === 0xff && body[1] === 0xfe) return 'utf-16le'
  if (body[0] === 0xfe && body[1] === 0xff) return 'utf-16be'
  if (header) return header
  if (html) {
    const head = body.subarray(0, 2048).toString('latin1')
    const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)
    if (meta) return meta[1]!
  }
  return 'utf-8'
}

/** Decodes with the declared charset; an unknown label falls back to UTF-8 and bad bytes become U+FFFD. */
function decode(body: Buffer, label: string): string {
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(label)
  } catch {
    decoder = new TextDecoder('utf-8')
  }
  const text = decoder.decode(body)
  // Node 20 decodes windows-1252 (and the latin1 labels that mean it) as ISO-8859-1, leaving C1 controls where € and quotes belong.
  return decoder.encoding === 'windows-1252' ? text.replace(/[\x80-\x9f]/g, (char) => WINDOWS_1252[char.charCodeAt(0) - 0x80] || char) : text
}

/** Converts parsed HTML; very deep markup, or any failure in the converters, falls back to plain text. */
function convertHtml(html: string, baseUrl: string, format: 'markdown' | 'text', readability: boolean): Converted {
  const { document } = parseHTML(html)
  const title = tidyText(document.title ?? '') || undefined
  const withTitle = (content: string): Converted => ({ content, ...(title && { title }) })
  for (const node of document.querySelectorAll(STRIP)) node.remove()
  // Links and images become absolute so the model can fetch what a page points to.
  for (const node of document.querySelectorAll('a[href], img[src]')) {
    const attribute = node.nodeName === 'A' ? 'href' : 'src'
    try {
      node.setAttribute(attribute, new URL(node.getAttribute(attribute)!, baseUrl).href)
    } catch {
      // Left as written.
    }
  }
  const root = (document.body ?? document.documentElement) as unknown as DomNode
  // Readability and turndown recurse per level and slow down sharply on hostile nesting.
  if (!root || maxDepth(root) > MAX_DEPTH) return withTitle(root ? textOf(root) : '')
  let source = root
  if (readability) {
    try {
      // Readability costs seconds on huge documents; past the element cap it throws before touching the page.
      const article = new Readability(document as any, { maxElemsToParse: MAX_READABILITY_ELEMENTS }).parse()
      // Converting linkedom nodes directly is faster than handing turndown a string for its own parser.
      if (article?.content && article.textContent?.trim())
        source = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`).document.body as unknown as DomNode
    } catch {
      // The whole body is converted instead.
    }
  }
  try {
    return withTitle(format === 'text' ? textOf(source) : turndown.turndown(source as any).trim())
  } catch {
    return withTitle(textOf(source))
  }
}

/** Turns a response body into the requested format; non-text bodies are refused with WEB_UNSUPPORTED_CONTENT_TYPE. */
export function convertBody(body: Buffer, contentType: string, options: { format: FetchFormat; baseUrl: string; readability: boolean }): Converted {
  const parsed = parseContentType(contentType)
  const mediaType = parsed.mediaType || sniff(body)
  if (!mediaType || (!HTML_TYPES.has(mediaType) && !TEXT_TYPES.test(mediaType))) {
    throw new WebError(
      'WEB_UNSUPPORTED_CONTENT_TYPE',
      `unsupported content type "${mediaType ?? 'unknown binary'}": web_fetch returns text, HTML, JSON and XML only (download binaries with bash, e.g. curl -o)`,
    )
  }
  const html = HTML_TYPES.has(mediaType)
  const text = decode(body, charsetOf(body, parsed.charset, html)).replace(/^\uFEFF/, '')
  if (!html || options.format === 'html') return { content: text }
  return convertHtml(text, options.baseUrl, options.format, options.readability)
}
