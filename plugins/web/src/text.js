// @ts-check
// Plain text out of HTML: from the document tree (dom.js), or streamed from the markup for pages too
// large or too deep for a tree. Plain JavaScript: the conversion worker imports it from src/ and dist/ alike.
import { walkHtml } from './tokens.js'

/** Elements whose content starts and ends a line. */
const BLOCKS = new Set(
  'address article aside blockquote br dd div dl dt fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul'.split(
    ' ',
  ),
)
/** Elements whose content is never readable text (and may be huge: inline scripts, SVG paths, data URIs). */
export const HIDDEN = new Set('script style noscript template iframe svg canvas object embed link meta'.split(' '))

/**
 * Collapses runs of spaces and blank lines.
 * @param {string} text
 */
export function tidyText(text) {
  return text
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/**
 * Readable text of a document tree: block elements start new lines; walked without recursion.
 * @param {import('./dom.js').Element} root
 */
export function textOf(root) {
  /** @type {string[]} */
  const parts = []
  // A `null` marks the end of a block element: a line break, written after its content.
  /** @type {Array<import('./dom.js').Element | string | null>} */
  const work = [root]
  while (work.length) {
    const item = work.pop()
    if (item === null) parts.push('\n')
    else if (typeof item === 'string') parts.push(item)
    else if (item && !item.omitted) {
      const block = BLOCKS.has(item.name)
      if (block) {
        parts.push('\n')
        work.push(null)
      }
      for (let index = item.children.length - 1; index >= 0; index--) work.push(/** @type {import('./dom.js').Element | string} */ (item.children[index]))
    }
  }
  return tidyText(parts.join(''))
}

/**
 * The text and title of a document, streamed from its markup in one linear pass (no DOM): what a page
 * too large or too deeply nested for a DOM converts to.
 * @param {string} html
 * @returns {{ text: string, title?: string }}
 */
export function streamText(html) {
  /** @type {string[]} */
  const parts = []
  /** @type {string[]} */
  const title = []
  let hidden = 0
  let inTitle = false
  let titled = false
  walkHtml(html, {
    open(name) {
      if (hidden || HIDDEN.has(name)) hidden++
      else if (name === 'title') inTitle = !titled
      else if (BLOCKS.has(name)) parts.push('\n')
    },
    close(name) {
      if (hidden) hidden--
      else if (name === 'title') {
        titled ||= inTitle
        inTitle = false
      } else if (BLOCKS.has(name)) parts.push('\n')
    },
    text(text) {
      if (inTitle) title.push(text)
      else if (!hidden) parts.push(text)
    },
  })
  const heading = tidyText(title.join(''))
  return { text: tidyText(parts.join('')), ...(heading && { title: heading }) }
}
