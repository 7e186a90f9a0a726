// @ts-check
// The main content of a page, after Mozilla Readability's method in one linear pass over the tree:
// navigation, sidebars, footers, forms and ad slots are set aside by tag, role and class; a single
// <main> or <article> is the content when it holds enough text; otherwise paragraphs score their
// ancestors (length, commas, class hints) and the best-scoring block, with the siblings that score
// near it, is the content. Link-heavy blocks inside it (menus, tag clouds) are dropped.
// Plain JavaScript: the conversion worker imports it from src/ and dist/ alike.
import { createElement, elementsOf } from './dom.js'

/** @typedef {import('./dom.js').Element} Element */

const ASIDE_TAGS = new Set(['nav', 'aside', 'footer', 'form', 'dialog', 'menu', 'button', 'select', 'textarea', 'input', 'iframe'])
const ASIDE_ROLES = new Set(['navigation', 'menu', 'menubar', 'complementary', 'banner', 'contentinfo', 'dialog', 'alertdialog', 'search'])
const UNLIKELY =
  /-ad-|ai2html|banner|breadcrumb|combx|comment|community|cookie|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|share|newsletter|subscribe|toc-sidebar/i
const MAYBE = /and|article|body|column|content|main|mathjax|shadow/i
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|markdown|prose|documentation/i
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget/i
const SCORED = new Set(['p', 'pre', 'td', 'blockquote', 'li', 'dd'])
const CONTAINERS = new Set(['div', 'section', 'article', 'main', 'td', 'blockquote', 'body', 'pre'])
const MIN_MAIN_TEXT = 200

/**
 * The element holding the page's main content (a detached wrapper when several siblings make it up),
 * or undefined when nothing stands out (the caller converts the whole body).
 * @param {Element} root
 * @returns {Element | undefined}
 */
export function mainContent(root) {
  const elements = elementsOf(root)
  for (const element of elements) element.aside = isAside(element)
  // Children come after their parents in document order, so a reverse walk sums every subtree once.
  for (let index = elements.length - 1; index >= 0; index--) {
    const element = /** @type {Element} */ (elements[index])
    for (const child of element.children) if (typeof child === 'string') measureText(element, child)
    if (element.name === 'a') element.linkLength = element.textLength
    const parent = element.parent
    if (parent && !element.aside) {
      parent.textLength += element.textLength
      parent.linkLength += element.linkLength
      parent.commas += element.commas
    }
  }
  /** @type {Element[]} */
  const semantic = []
  for (const element of elements) if (element.name === 'main' || element.name === 'article' || element.attributes.role === 'main') semantic.push(element)
  const outermost = semantic.filter((element) => !semantic.some((other) => other !== element && contains(other, element)))
  const only = outermost.length === 1 ? /** @type {Element} */ (outermost[0]) : undefined
  if (only && only.textLength >= MIN_MAIN_TEXT) return prune(only)

  const top = bestCandidate(elements)
  if (!top) return undefined
  const parent = top.parent
  if (!parent) return prune(top)
  const threshold = Math.max(10, top.score * 0.2)
  // The siblings that belong with it, under a detached element (they keep their own parent).
  const wrapper = createElement('div', {}, null)
  for (const sibling of parent.children) {
    if (typeof sibling === 'string' || sibling.aside) continue
    const density = sibling.textLength ? sibling.linkLength / sibling.textLength : 0
    const keep =
      sibling === top || sibling.score >= threshold || (sibling.name === 'p' && sibling.textLength > 80 && density < 0.25) || /^h[1-3]$/.test(sibling.name)
    if (keep) wrapper.children.push(prune(sibling))
  }
  return wrapper
}

/**
 * Counts a text's characters (without its outer whitespace) and commas into `element`.
 * @param {Element} element
 * @param {string} text
 */
function measureText(element, text) {
  let start = 0
  let end = text.length
  while (start < end && text.charCodeAt(start) <= 32) start++
  while (end > start && text.charCodeAt(end - 1) <= 32) end--
  element.textLength += end - start
  for (let at = text.indexOf(',', start); at >= 0 && at < end; at = text.indexOf(',', at + 1)) element.commas++
}

/** @param {Element} element */
function isAside(element) {
  const name = element.name
  if (name === 'body' || name === 'html' || name === 'main' || name === 'article' || name === 'a') return false
  if (ASIDE_TAGS.has(name) || ASIDE_ROLES.has(element.attributes.role ?? '')) return true
  if (element.attributes.hidden !== undefined || element.attributes['aria-hidden'] === 'true') return true
  if (/display\s*:\s*none|visibility\s*:\s*hidden/i.test(element.attributes.style ?? '')) return true
  if (name === 'header') return !within(element, ['article', 'main'])
  const hints = hintsOf(element)
  return hints !== '' && UNLIKELY.test(hints) && !MAYBE.test(hints) && !within(element, ['table', 'code', 'pre'])
}

/** The class and id of an element, where pages name their navigation, ads and content. @param {Element} element */
function hintsOf(element) {
  const { class: className, id } = element.attributes
  return className === undefined ? (id ?? '') : id === undefined ? className : `${className} ${id}`
}

/**
 * Paragraph-like elements score their container ancestors; the best score, discounted by link density.
 * @param {Element[]} elements
 */
function bestCandidate(elements) {
  /** @type {Element[]} */
  const candidates = []
  for (const element of elements) {
    if (!SCORED.has(element.name) || element.textLength < 25 || hiddenByAncestor(element)) continue
    const points = 1 + element.commas + Math.min(Math.floor(element.textLength / 100), 3)
    let ancestor = element.parent
    for (let level = 0; ancestor && level < 5; level++, ancestor = ancestor.parent) {
      if (!CONTAINERS.has(ancestor.name)) continue
      if (ancestor.score === 0) {
        candidates.push(ancestor)
        // A small offset keeps a candidate whose hints cancel its base out from being counted twice.
        ancestor.score = initialScore(ancestor) + 1e-9
      }
      ancestor.score += points / (level === 0 ? 1 : level === 1 ? 2 : level * 3)
    }
  }
  /** @type {Element | undefined} */
  let best
  let bestScore = 0
  for (const candidate of candidates) {
    candidate.score *= 1 - (candidate.textLength ? candidate.linkLength / candidate.textLength : 0)
    if (candidate.score > bestScore) {
      best = candidate
      bestScore = candidate.score
    }
  }
  return best && best.textLength >= 100 ? best : undefined
}

/** @param {Element} element */
function initialScore(element) {
  const base = element.name === 'div' ? 5 : element.name === 'pre' || element.name === 'td' || element.name === 'blockquote' ? 3 : 0
  const hints = hintsOf(element)
  return hints === '' ? base : base + (POSITIVE.test(hints) ? 25 : 0) - (NEGATIVE.test(hints) ? 25 : 0)
}

/** @param {Element} element */
function hiddenByAncestor(element) {
  for (let node = /** @type {Element | null} */ (element); node; node = node.parent) if (node.aside) return true
  return false
}

/**
 * @param {Element} element
 * @param {string[]} names
 */
function within(element, names) {
  for (let node = element.parent; node; node = node.parent) if (names.includes(node.name)) return true
  return false
}

/**
 * @param {Element} ancestor
 * @param {Element} element
 */
function contains(ancestor, element) {
  for (let node = element.parent; node; node = node.parent) if (node === ancestor) return true
  return false
}

/**
 * Marks the aside elements and link-heavy blocks (menus, tag clouds, share bars) under `element` as
 * left out, for the writers to skip.
 * @param {Element} element
 * @returns {Element}
 */
function prune(element) {
  /** @type {Element[]} */
  const stack = [element]
  while (stack.length) {
    const node = /** @type {Element} */ (stack.pop())
    for (const child of node.children) {
      if (typeof child === 'string') continue
      if (child.aside || linkList(child)) child.omitted = true
      else stack.push(child)
    }
  }
  return element
}

/** A short block that is mostly links. @param {Element} element */
function linkList(element) {
  const name = element.name
  return (
    (name === 'ul' || name === 'ol' || name === 'div') && element.textLength > 0 && element.textLength < 300 && element.linkLength / element.textLength > 0.5
  )
}
