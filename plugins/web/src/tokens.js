// @ts-check
// The element structure of an HTML document, streamed from htmlparser2's tokenizer with the same
// implied-end-tag rules as its Parser. The Parser keeps its open-element stack with `unshift` and looks
// end tags up with `indexOf`, so hostile nesting (100 000 `<div>`) costs it seconds; here the stack grows
// at its end and a count per tag name answers "is it open", so every document is walked in linear time.
// Plain JavaScript: the conversion worker imports it from src/ and dist/ alike.
import { Tokenizer } from 'htmlparser2'

const P = new Set(['p'])
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'])
const DD_DT = new Set(['dd', 'dt'])
const RT_RP = new Set(['rt', 'rp'])
const SECTIONS = new Set(['thead', 'tbody'])
/** @type {Map<string, Set<string>>} Open elements an opening tag closes when one is the current element. */
const IMPLIES_CLOSE = new Map([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT],
  ['dt', DD_DT],
  ['rt', RT_RP],
  ['rp', RT_RP],
  ['tbody', SECTIONS],
  ['tfoot', SECTIONS],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => /** @type {const} */ ([name, FORM])),
  ...[
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((name) => /** @type {const} */ ([name, P])),
])
/** Elements that never have content or an end tag. */
export const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
])
// Inside SVG and MathML `<x/>` closes the element, as in XML.
const FOREIGN = new Set(['svg', 'math'])

/**
 * What a walk reports. `open` gets the element's depth (1 for a top-level element) and the attributes
 * the walk collects (an empty object otherwise); returning `false` from any callback stops the walk.
 * @typedef {{
 *   open(name: string, attributes: Record<string, string>, depth: number): void | boolean
 *   close(name: string): void | boolean
 *   text(text: string): void | boolean
 * }} HtmlHandler
 */

/** @param {number} codePoint */
function character(codePoint) {
  return codePoint > 0x10ffff ? '\uFFFD' : String.fromCodePoint(codePoint)
}

/**
 * Walks `html`, reporting elements opened and closed (implied ends included, every open element closed
 * at the end) and text with entities decoded.
 * @param {string} html
 * @param {HtmlHandler} handler
 * @param {{ attributes?: ReadonlySet<string> }} [options] `attributes`: the names whose values to collect.
 */
export function walkHtml(html, handler, options = {}) {
  /** @type {string[]} */
  const stack = []
  /** @type {Map<string, number>} */
  const openCounts = new Map()
  // Only the attributes asked for are read: the others cost no string and no property.
  const wanted = options.attributes
  let collecting = false
  /** @type {Record<string, string>} */
  const none = Object.freeze({})
  let foreign = 0
  let stopped = false
  let attributes = none
  let attributeName = ''
  let attributeValue = ''
  let current = ''

  // A function, not the flag itself, in loop conditions: callbacks inside the loop set it.
  const running = () => !stopped
  /** @param {boolean | void} answer */
  const check = (answer) => {
    if (answer === false && !stopped) {
      stopped = true
      tokenizer.pause()
    }
  }
  const pop = () => {
    const name = /** @type {string} */ (stack.pop())
    openCounts.set(name, /** @type {number} */ (openCounts.get(name)) - 1)
    if (FOREIGN.has(name)) foreign--
    check(handler.close(name))
    return name
  }
  /** @param {string} name */
  const open = (name) => {
    const implied = IMPLIES_CLOSE.get(name)
    if (implied) while (stack.length && implied.has(stack[stack.length - 1]) && running()) pop()
    current = name
    attributes = none
    if (VOID.has(name)) return
    stack.push(name)
    openCounts.set(name, (openCounts.get(name) ?? 0) + 1)
    if (FOREIGN.has(name)) foreign++
  }
  // The element is reported once its attributes are known; a void element closes at once.
  const opened = () => {
    if (!current) return
    const name = current
    current = ''
    const isVoid = VOID.has(name)
    check(handler.open(name, attributes, isVoid ? stack.length + 1 : stack.length))
    if (isVoid) check(handler.close(name))
  }
  /** @type {(start: number, end: number) => string} */
  const slice = (start, end) => html.slice(start, end)

  const tokenizer = new Tokenizer(
    { decodeEntities: true },
    {
      onopentagname: (start, end) => open(slice(start, end).toLowerCase()),
      onattribname(start, end) {
        attributeName = slice(start, end).toLowerCase()
        attributeValue = ''
        collecting = wanted !== undefined && wanted.has(attributeName)
      },
      onattribdata(start, end) {
        if (collecting) attributeValue += slice(start, end)
      },
      onattribentity(codePoint) {
        if (collecting) attributeValue += character(codePoint)
      },
      onattribend() {
        if (!collecting) return
        collecting = false
        // A plain object: only the wanted names (never `__proto__`) become keys.
        if (attributes === none) attributes = {}
        if (!Object.hasOwn(attributes, attributeName)) attributes[attributeName] = attributeValue
      },
      onopentagend: () => opened(),
      onselfclosingtag() {
        const name = current
        opened()
        if (foreign > 0 && stack[stack.length - 1] === name && !stopped) pop()
      },
      onclosetag(start, end) {
        const name = slice(start, end).toLowerCase()
        if (VOID.has(name)) {
          // `</br>` is a line break in every browser.
          if (name === 'br') {
            open('br')
            opened()
          }
          return
        }
        if (openCounts.get(name)) {
          while (running() && pop() !== name);
        } else if (name === 'p') {
          // A stray `</p>` is an empty paragraph.
          open('p')
          opened()
          if (!stopped) pop()
        }
      },
      ontext: (start, end) => check(handler.text(slice(start, end))),
      ontextentity: (codePoint) => check(handler.text(character(codePoint))),
      oncdata: (start, end) => check(handler.text(slice(start, end))),
      oncomment() {},
      ondeclaration() {},
      onprocessinginstruction() {},
      onend() {},
    },
  )
  tokenizer.write(html)
  if (stopped) return
  tokenizer.end()
  opened()
  while (stack.length && running()) pop()
}
