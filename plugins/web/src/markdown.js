// @ts-check
// Markdown from the document tree (dom.js), written for a model to read: ATX headings at the page's own
// levels, GFM tables, fenced code with its language, absolute links, and escapes only where Markdown
// would otherwise misread the text. The tree is at most 256 levels deep (convert.js routes deeper pages
// to streamed text), so the writer recurses.
// Plain JavaScript: the conversion worker imports it from src/ and dist/ alike.
import { textContent } from './dom.js'

/** @typedef {import('./dom.js').Element} Element */

/** Elements that stand on lines of their own. */
const BLOCK = new Set(
  'address article aside blockquote body center details dialog dd div dl dt fieldset figcaption figure footer form header hgroup html li main menu nav ol p pre section summary table tbody td tfoot th thead tr ul'.split(
    ' ',
  ),
)
const HEADING = /^h([1-6])$/
const LANGUAGE = /(?:^|\s)(?:language|lang|highlight-source|brush:?)-?([\w+#.-]+)/i

/**
 * @typedef {{ baseUrl: string }} MarkdownOptions
 */

/**
 * Converts a tree (or subtree) to Markdown.
 * @param {Element} root
 * @param {MarkdownOptions} options
 */
export function toMarkdown(root, options) {
  return tidy(children(root, options))
}

/**
 * @param {Element} element
 * @param {MarkdownOptions} options
 */
function children(element, options) {
  let out = ''
  const nodes = element.children
  for (let index = 0; index < nodes.length; index++) {
    const node = /** @type {Element | string} */ (nodes[index])
    if (typeof node === 'string') out += text(node, element, out)
    else if (!node.omitted) out += convert(node, options)
  }
  return out
}

/**
 * Collapses whitespace and escapes what Markdown would read as syntax.
 * @param {string} value
 * @param {Element} parent
 * @param {string} before what the parent's earlier children wrote
 */
function text(value, parent, before) {
  const startsLine = before === '' ? BLOCK.has(parent.name) : endsLine(before)
  let result = value.replace(/[ \t\n\r\f\u00a0]+/g, ' ')
  if (startsLine) result = result.trimStart()
  // Emphasis and code spans: `*` unless it stands alone between spaces, `_` at a word's edge, every
  // backtick, a backslash before punctuation (elsewhere it means itself), `[` that would open a link.
  if (/[`\\*_[]/.test(result)) {
    result = result
      .replace(/`|\\(?=[!-/:-@[-`{-~])/g, '\\$&')
      .replace(/\*(?! )|(?<! )\*/g, '\\*')
      .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_')
      .replace(/\[(?=[^\]]*\]\()/g, '\\[')
  }
  // Block syntax where this text starts a line: `# `, `> `, `- `, `1. `, `===`.
  if (startsLine && /^(?:#{1,6}(?: |$)|>|[-+] |=+$|-{3,}$|\d+[.)] )/.test(result))
    result = result.replace(/^(#{1,6}|>|[-+]|=+$|-{3,}$)/, '\\$1').replace(/^(\d+)([.)])/, '$1\\$2')
  return result
}

/** Whether `written` ends at the start of a line (only spaces after its last line break). @param {string} written */
function endsLine(written) {
  let index = written.length - 1
  while (index >= 0 && written.charCodeAt(index) === 32) index--
  return index < 0 || written.charCodeAt(index) === 10
}

/**
 * @param {Element} element
 * @param {MarkdownOptions} options
 * @returns {string}
 */
function convert(element, options) {
  const name = element.name
  const heading = HEADING.exec(name)
  if (heading) {
    const content = inline(children(element, options))
    return content ? `\n\n${'#'.repeat(Number(heading[1]))} ${content}\n\n` : ''
  }
  switch (name) {
    case 'br':
      return '\n'
    case 'hr':
      return '\n\n---\n\n'
    case 'strong':
    case 'b':
      return wrap('**', children(element, options))
    case 'em':
    case 'i':
      return wrap('*', children(element, options))
    case 'del':
    case 's':
    case 'strike':
      return wrap('~~', children(element, options))
    case 'code':
    case 'kbd':
    case 'samp':
    case 'tt':
      return codeSpan(textContent(element))
    case 'pre':
      return fence(element)
    case 'a':
      return link(element, options)
    case 'img':
      return image(element, options)
    case 'ul':
    case 'ol':
      return list(element, options)
    case 'blockquote': {
      const content = tidy(children(element, options))
      return content ? `\n\n${content.replace(/^/gm, '> ')}\n\n` : ''
    }
    case 'table':
      return table(element, options)
    case 'dt':
      return wrapBlock(wrap('**', children(element, options)))
    case 'head':
    case 'title':
    case 'button':
    case 'select':
    case 'input':
    case 'textarea':
      return ''
  }
  const content = children(element, options)
  return BLOCK.has(name) ? wrapBlock(content) : content
}

/** @param {string} content */
function wrapBlock(content) {
  return `\n\n${content.trim()}\n\n`
}

/** Inline content on one line. @param {string} content */
function inline(content) {
  return content.replace(/\s*\n+\s*/g, ' ').trim()
}

/**
 * Emphasis around the content, its outer spaces kept outside (`** x**` is not bold).
 * @param {string} marker
 * @param {string} content
 */
function wrap(marker, content) {
  const inner = inline(content)
  if (!inner) return content.replace(/\S/g, '')
  return `${spaceAt(content, 0)}${marker}${inner}${marker}${spaceAt(content, content.length - 1)}`
}

/** A space when `content` has whitespace at `index`, to keep it outside the syntax wrapped around it. @param {string} content @param {number} index */
function spaceAt(content, index) {
  const code = content.charCodeAt(index)
  return code === 32 || code === 10 || code === 9 ? ' ' : ''
}

/** @param {string} code */
function codeSpan(code) {
  const value = code.replace(/\s+/g, ' ')
  if (!value.trim()) return value
  const longest = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length))
  const ticks = '`'.repeat(longest + 1)
  const pad = value.startsWith('`') || value.endsWith('`') ? ' ' : ''
  return `${ticks}${pad}${value}${pad}${ticks}`
}

/** A fenced block whose info string is the language the markup names. @param {Element} element */
function fence(element) {
  const code = element.children.find((child) => typeof child !== 'string' && child.name === 'code')
  const classes = [element, code, element.parent].map((node) =>
    node && typeof node !== 'string' ? `${node.attributes.class ?? ''} ${node.attributes['data-lang'] ? `lang-${node.attributes['data-lang']}` : ''}` : '',
  )
  const language = classes.map((value) => LANGUAGE.exec(value)?.[1]).find(Boolean) ?? ''
  const body = textContent(element).replace(/^\n/, '').replace(/\s+$/, '')
  const longest = Math.max(2, ...(body.match(/^`{3,}/gm) ?? []).map((run) => run.length))
  const ticks = '`'.repeat(longest + 1)
  return `\n\n${ticks}${language.toLowerCase()}\n${body}\n${ticks}\n\n`
}

/**
 * @param {string | undefined} value
 * @param {string} baseUrl
 */
function absolute(value, baseUrl) {
  if (!value) return undefined
  try {
    const url = new URL(value.trim(), baseUrl)
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : undefined
  } catch {
    return undefined
  }
}

/** Parentheses and spaces in a link destination would end it early. @param {string} url */
function destination(url) {
  return url.replace(/[() ]/g, (char) => encodeURIComponent(char))
}

/**
 * @param {Element} element
 * @param {MarkdownOptions} options
 */
function link(element, options) {
  const content = children(element, options)
  const label = inline(content)
  const href = absolute(element.attributes.href, options.baseUrl)
  // Heading permalinks (`¶`, `#`, `§`) say nothing.
  if (element.attributes.href?.startsWith('#') && !/[\p{L}\p{N}]/u.test(label)) return ''
  if (!href || !label || element.attributes.href?.startsWith('#')) return content
  return `${spaceAt(content, 0)}[${label}](${destination(href)})${spaceAt(content, content.length - 1)}`
}

/**
 * @param {Element} element
 * @param {MarkdownOptions} options
 */
function image(element, options) {
  // Inline data: images can be megabytes of base64 that say nothing to the model.
  const src = absolute(element.attributes.src, options.baseUrl)
  if (!src) return ''
  const alt = (element.attributes.alt ?? '').replace(/\s+/g, ' ').replace(/[[\]]/g, '\\$&').trim()
  return `![${alt}](${destination(src)})`
}

/**
 * @param {Element} element
 * @param {MarkdownOptions} options
 */
function list(element, options) {
  const ordered = element.name === 'ol'
  let number = Number.parseInt(element.attributes.start ?? '1', 10)
  if (!Number.isFinite(number)) number = 1
  const items = []
  for (const child of element.children) {
    if (typeof child === 'string') continue
    const marker = ordered ? `${number++}. ` : '- '
    const raw = child.name === 'li' ? children(child, options) : convert(child, options)
    // Most items are one line: only a multi-line one needs tidying and indenting. A nested list follows
    // its item's text directly, as in a tight list.
    const multiline = raw.trim().includes('\n')
    const content = multiline ? tidy(raw).replace(/\n\n(?=(?:[-*+]|\d+[.)]) )/g, '\n') : raw.trim()
    if (!content) continue
    items.push(marker + (multiline ? content.replace(/\n(?=.)/g, `\n${' '.repeat(marker.length)}`) : content))
  }
  return items.length ? `\n\n${items.join('\n')}\n\n` : ''
}

/**
 * A GFM table: the first row is the header, cells on one line, pipes escaped. Layout tables (a table in
 * a cell) are written as their cells' blocks instead.
 * @param {Element} element
 * @param {MarkdownOptions} options
 */
function table(element, options) {
  /** @type {Element[]} */
  const rows = []
  /** @type {Element[]} */
  const pending = [element]
  let layout = false
  while (pending.length) {
    const node = /** @type {Element} */ (pending.shift())
    for (const child of node.children) {
      if (typeof child === 'string') continue
      if (child.name === 'tr') rows.push(child)
      else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') pending.push(child)
    }
  }
  const cells = rows.map((row) => row.children.filter((cell) => typeof cell !== 'string' && (cell.name === 'td' || cell.name === 'th')))
  for (const row of cells) for (const cell of row) if (hasTable(/** @type {Element} */ (cell))) layout = true
  const caption = element.children.find((child) => typeof child !== 'string' && child.name === 'caption')
  const title = caption ? `${inline(children(/** @type {Element} */ (caption), options))}\n\n` : ''
  if (layout || !rows.length) return wrapBlock(children(element, options))
  const lines = cells.map((row) =>
    row.map((cell) =>
      inline(children(/** @type {Element} */ (cell), options))
        .replace(/\|/g, '\\|')
        .replace(/\s*\\\n/g, ' '),
    ),
  )
  const width = Math.max(...lines.map((row) => row.length))
  if (!width) return ''
  const render = (/** @type {string[]} */ row) => `| ${Array.from({ length: width }, (_, index) => row[index] ?? '').join(' | ')} |`
  const [header = [], ...body] = lines
  return `\n\n${title}${[render(header), render(Array(width).fill('---')), ...body.map(render)].join('\n')}\n\n`
}

/** @param {Element} element */
function hasTable(element) {
  for (const child of element.children) if (typeof child !== 'string' && (child.name === 'table' || hasTable(child))) return true
  return false
}

/**
 * Blank lines collapsed, trailing spaces dropped, outside code fences.
 * @param {string} markdown
 */
function tidy(markdown) {
  const lines = markdown.split('\n')
  /** @type {string[]} */
  const out = []
  let fenceMarker = ''
  for (const line of lines) {
    const opens = line.includes('```') ? /^\s*(`{3,})/.exec(line) : null
    if (fenceMarker) {
      out.push(line)
      if (opens && opens[1] === fenceMarker && line.trim() === fenceMarker) fenceMarker = ''
      continue
    }
    if (opens) fenceMarker = /** @type {string} */ (opens[1])
    const last = line.charCodeAt(line.length - 1)
    const trimmed = opens || (last !== 32 && last !== 9) ? line : line.replace(/[ \t]+$/, '')
    if (!trimmed && !out[out.length - 1]) continue
    out.push(trimmed)
  }
  while (out.length && !out[out.length - 1]) out.pop()
  while (out.length && !out[0]) out.shift()
  return out.join('\n')
}
