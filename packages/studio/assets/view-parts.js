// The pieces of the session view: text, content blocks, diffs, badges and formatting, all built with
// textContent (nothing a model or a tool wrote is parsed as markup). A classic script, so the export can
// inline it; it defines `globalThis.CordageStudio`, which render.js completes with the view.
;(function (global) {
  'use strict'

  const TEXT_LIMIT = 20000
  const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp)$/
  const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/
  // Format characters change what text looks like without being seen: direction overrides and isolates
  // reorder it (`invoice\u202Efdp.sh` reads "invoicehs.pdf"), zero-width ones hide inside names
  // (`git\u200Bhub.com`). Each is shown as a mark like ⟨U+202E⟩; only the joiners of emoji and scripts stay.
  const FORMAT = /(?![\u200c\u200d])\p{Cf}/gu

  /** `text` with every format character written as a visible ⟨U+XXXX⟩ mark. */
  function reveal(text) {
    return String(text).replace(FORMAT, (char) => `⟨U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`)
  }

  /** `text` as a label shows it: cut after TEXT_LIMIT characters (a label has no "Show all"), format characters marked. */
  function shown(text) {
    const value = String(text)
    if (value.length <= TEXT_LIMIT) return reveal(value)
    return `${reveal(value.slice(0, TEXT_LIMIT))}… [${(value.length - TEXT_LIMIT).toLocaleString('en')} more characters]`
  }

  function el(tag, className, text) {
    const node = document.createElement(tag)
    if (className) node.className = className
    if (text !== undefined && text !== null) node.textContent = shown(text)
    return node
  }

  function badge(kind, text) {
    return el('span', `badge badge-${kind}`, text)
  }

  function formatDuration(ms) {
    if (typeof ms !== 'number' || !(ms >= 0)) return ''
    if (ms < 1000) return `${Math.round(ms)} ms`
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`
    const minutes = Math.floor(ms / 60000)
    return `${minutes} min ${Math.round((ms % 60000) / 1000)} s`
  }

  function formatCount(count) {
    if (typeof count !== 'number' || !Number.isFinite(count)) return '0'
    if (count < 1000) return String(count)
    if (count < 1e6) return `${(count / 1000).toFixed(count < 10000 ? 1 : 0)}k`
    return `${(count / 1e6).toFixed(1)}M`
  }

  function formatUsage(usage) {
    if (!usage || typeof usage !== 'object') return ''
    return `${formatCount(usage.inputTokens)} in / ${formatCount(usage.outputTokens)} out`
  }

  function formatCost(cost) {
    if (typeof cost !== 'number' || !Number.isFinite(cost)) return ''
    return `$${cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}`
  }

  /** An ISO time as `2026-12-04 18:33:20 UTC` (the same for every reader of a shared file). */
  function formatTime(value) {
    const time = timeOf(value)
    return time === undefined ? '' : `${new Date(time).toISOString().slice(0, 19).replace('T', ' ')} UTC`
  }

  function timeOf(value) {
    const time = Date.parse(value)
    return Number.isNaN(time) ? undefined : time
  }

  function stringOf(value) {
    return typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)
  }

  /** A `<pre>` holding `text`, cut at TEXT_LIMIT characters with a button that shows it whole. */
  function longText(className, text) {
    const pre = el('pre', className)
    const value = stringOf(text)
    if (value.length <= TEXT_LIMIT) {
      pre.textContent = reveal(value)
      return pre
    }
    const wrap = el('div', 'long')
    pre.textContent = reveal(value.slice(0, TEXT_LIMIT))
    const more = el('button', 'more', `Show all ${value.length.toLocaleString('en')} characters`)
    more.type = 'button'
    more.addEventListener('click', () => {
      pre.textContent = reveal(value)
      more.remove()
    })
    wrap.append(pre, more)
    return wrap
  }

  function prettyJson(text) {
    if (typeof text !== 'string') return JSON.stringify(text, null, 2)
    try {
      return JSON.stringify(JSON.parse(text), null, 2)
    } catch {
      return text
    }
  }

  function preview(text, length) {
    const flat = stringOf(text).replace(/\s+/g, ' ')
    return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat
  }

  /** Tool content blocks: text as text, images only as validated base64 data of a raster type. */
  function renderContent(blocks) {
    const box = el('div', 'content')
    if (!Array.isArray(blocks)) return box
    for (const block of blocks) {
      if (!block || typeof block !== 'object') continue
      if (block.type === 'text') box.append(longText('text', block.text))
      else if (block.type === 'image') {
        if (typeof block.mimeType === 'string' && IMAGE_TYPES.test(block.mimeType) && typeof block.data === 'string' && BASE64.test(block.data)) {
          const image = el('img', 'image')
          image.alt = `image (${block.mimeType})`
          image.src = `data:${block.mimeType};base64,${block.data}`
          box.append(image)
        } else box.append(el('p', 'note', `[image of type ${stringOf(block.mimeType)} not shown]`))
      } else if (block.type === 'resource') {
        box.append(el('p', 'note', `resource ${stringOf(block.uri)}${block.mimeType ? ` (${block.mimeType})` : ''}`))
        if (typeof block.text === 'string') box.append(longText('text', block.text))
      } else box.append(longText('text', JSON.stringify(block, null, 2)))
    }
    return box
  }

  /** The `meta` of `edit`/`write` (`{ kind: 'diff', path, operation, diff, additions, deletions }`) as a diff. */
  function renderDiff(meta) {
    if (!meta || typeof meta !== 'object' || meta.kind !== 'diff' || typeof meta.diff !== 'string') return undefined
    const figure = el('figure', 'diff')
    const caption = el('figcaption')
    caption.append(el('span', 'path', stringOf(meta.path)), ' ', badge('op', stringOf(meta.operation)), ' ')
    caption.append(el('span', 'add', `+${Number(meta.additions) || 0}`), ' ', el('span', 'del', `−${Number(meta.deletions) || 0}`))
    if (meta.truncated) caption.append(' ', badge('warn', 'truncated'))
    figure.append(caption)
    const pre = el('pre', 'diff-lines')
    const lines = meta.diff.split('\n')
    if (lines.at(-1) === '') lines.pop()
    const kept = lines.length > 4000 ? lines.slice(0, 4000) : lines
    for (const line of kept) {
      const kind =
        line.startsWith('+++') || line.startsWith('---')
          ? 'file'
          : line.startsWith('@@')
            ? 'hunk'
            : line.startsWith('+')
              ? 'add'
              : line.startsWith('-')
                ? 'del'
                : 'ctx'
      const span = el('span', `line ${kind}`, line)
      span.append('\n')
      pre.append(span)
    }
    if (kept !== lines) pre.append(el('span', 'line note', `… ${lines.length - kept.length} more lines\n`))
    figure.append(pre)
    return figure
  }

  /** Badge of a tool result: ok, error (with its code) or denied (a policy or a user said no). */
  function resultBadge(data) {
    if (!data.isError) return badge('ok', 'ok')
    const code = data.error && typeof data.error.code === 'string' ? data.error.code : ''
    if (code === 'DENIED') return badge('denied', 'denied')
    return badge('error', code ? `error ${code}` : 'error')
  }

  global.CordageStudio = {
    el,
    badge,
    formatDuration,
    formatCount,
    formatUsage,
    formatCost,
    formatTime,
    timeOf,
    stringOf,
    reveal,
    shown,
    longText,
    prettyJson,
    preview,
    renderContent,
    renderDiff,
    resultBadge,
  }
})(globalThis)
