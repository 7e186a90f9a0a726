// @ts-check
// A small document tree (elements, attributes, text) built in one linear pass over the markup: what the
// main-content extraction and the Markdown writer read. Only what they need: no live DOM, no events, no
// selectors; hidden content (scripts, styles, SVG, …) never enters it.
// Plain JavaScript: the conversion worker imports it from src/ and dist/ alike.
import { HIDDEN } from './text.js'
import { walkHtml } from './tokens.js'

/** The attributes the extraction and the Markdown writer read. */
const ATTRIBUTES = new Set(['href', 'src', 'alt', 'class', 'id', 'role', 'style', 'hidden', 'aria-hidden', 'start', 'data-lang'])

/**
 * An element; its children are elements and text (strings, entities decoded, adjacent runs joined).
 * The extraction (extract.js) keeps what it measures on the element: a side table costs a lookup per visit.
 * @typedef {{
 *   name: string, attributes: Record<string, string>, parent: Element | null, children: Array<Element | string>,
 *   textLength: number, linkLength: number, commas: number, aside: boolean, score: number, omitted: boolean
 * }} Element
 * `textLength`: characters of text under it, aside elements excluded; `linkLength`: those inside links;
 * `aside`: navigation, sidebars, forms and the like; `omitted`: left out of the main content (writers skip it).
 */

/**
 * A new element (`name` lower case), not yet attached to `parent`.
 * @param {string} name
 * @param {Record<string, string>} attributes
 * @param {Element | null} parent
 * @returns {Element}
 */
export function createElement(name, attributes, parent) {
  return { name, attributes, parent, children: [], textLength: 0, linkLength: 0, commas: 0, aside: false, score: 0, omitted: false }
}

/**
 * Parses `html` into a tree under a `#document` root, with the first `<title>`'s text; undefined when the
 * page has more elements or deeper nesting than `limits` allow (it stops there).
 * @param {string} html
 * @param {{ maxElements: number, maxDepth: number }} limits
 * @returns {{ root: Element, title?: string } | undefined}
 */
export function parseDocument(html, limits) {
  const root = createElement('#document', {}, null)
  let current = root
  let hidden = 0
  let elements = 0
  let over = false
  /** @type {string | undefined} */
  let title
  walkHtml(
    html,
    {
      open(name, attributes, depth) {
        if (++elements > limits.maxElements || depth > limits.maxDepth) {
          over = true
          return false
        }
        if (hidden || HIDDEN.has(name)) {
          hidden++
          return
        }
        const element = createElement(name, attributes, current)
        current.children.push(element)
        current = element
      },
      close(name) {
        if (hidden) {
          hidden--
          return
        }
        if (name === 'title' && title === undefined) title = textContent(current)
        current = current.parent ?? root
      },
      text(text) {
        if (hidden) return
        const children = current.children
        const last = children.length - 1
        if (last >= 0 && typeof children[last] === 'string') children[last] += text
        else children.push(text)
      },
    },
    { attributes: ATTRIBUTES },
  )
  if (over) return undefined
  const tidy = title?.replace(/\s+/g, ' ').trim()
  return { root, ...(tidy && { title: tidy }) }
}

/**
 * The text under `node`, concatenated as written (no layout).
 * @param {Element | string} node
 */
export function textContent(node) {
  if (typeof node === 'string') return node
  /** @type {string[]} */
  const parts = []
  /** @type {Array<Element | string>} */
  const stack = [node]
  while (stack.length) {
    const item = /** @type {Element | string} */ (stack.pop())
    if (typeof item === 'string') parts.push(item)
    else for (let index = item.children.length - 1; index >= 0; index--) stack.push(/** @type {Element | string} */ (item.children[index]))
  }
  return parts.join('')
}

/**
 * Every element under `root` (itself excluded), in document order.
 * @param {Element} root
 * @returns {Element[]}
 */
export function elementsOf(root) {
  /** @type {Element[]} */
  const elements = []
  /** @type {Element[]} */
  const stack = [root]
  while (stack.length) {
    const element = /** @type {Element} */ (stack.pop())
    if (element !== root) elements.push(element)
    for (let index = element.children.length - 1; index >= 0; index--) {
      const child = element.children[index]
      if (typeof child !== 'string') stack.push(/** @type {Element} */ (child))
    }
  }
  return elements
}
