const BLOCKS = new Set([
  'ADDRESS',
  'ARTICLE',
  'ASIDE',
  'BLOCKQUOTE',
  'BR',
  'DD',
  'DIV',
  'DL',
  'DT',
  'FIELDSET',
  'FIGCAPTION',
  'FIGURE',
  'FOOTER',
  'FORM',
  'H1',
  'H2',
  'H3',
  'H4',
  'H5',
  'H6',
  'HEADER',
  'HR',
  'LI',
  'MAIN',
  'NAV',
  'OL',
  'P',
  'PRE',
  'SECTION',
  'TABLE',
  'TD',
  'TH',
  'TR',
  'UL',
])

/** The part of a DOM node (linkedom's) the walkers read. */
export interface DomNode {
  nodeType: number
  nodeName: string
  nodeValue: string | null
  firstChild: DomNode | null
  nextSibling: DomNode | null
}

/** Collapses runs of spaces and blank lines. */
export function tidyText(text: string): string {
  return text
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/** The deepest element nesting under `root`, walked without recursion (so hostile markup cannot overflow the stack). */
export function maxDepth(root: DomNode): number {
  let deepest = 0
  const stack: Array<[DomNode, number]> = [[root, 0]]
  while (stack.length) {
    const [node, depth] = stack.pop()!
    if (depth > deepest) deepest = depth
    for (let child = node.firstChild; child; child = child.nextSibling) if (child.nodeType === 1) stack.push([child, depth + 1])
  }
  return deepest
}

/** Readable text of a DOM subtree: block elements start new lines; walked without recursion. */
export function textOf(root: DomNode): string {
  const parts: string[] = []
  const stack: Array<DomNode | string> = [root]
  while (stack.length) {
    const item = stack.pop()!
    if (typeof item === 'string') {
      parts.push(item)
      continue
    }
    if (item.nodeType === 3) parts.push(item.nodeValue ?? '')
    if (item.nodeType !== 1 && item.nodeType !== 9 && item.nodeType !== 11) continue
    const block = BLOCKS.has(item.nodeName)
    if (block) stack.push('\n')
    const children: DomNode[] = []
    for (let child = item.firstChild; child; child = child.nextSibling) children.push(child)
    for (let index = children.length - 1; index >= 0; index--) stack.push(children[index]!)
    if (block) stack.push('\n')
  }
  return tidyText(parts.join(''))
}
