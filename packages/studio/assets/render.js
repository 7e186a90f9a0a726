// The session view shared by the live studio page and the `cordage replay --html` export, built from the
// pieces in view-parts.js. A classic script (the export inlines it); it adds `CordageStudio.SessionView`.
;(function (global) {
  'use strict'

  const {
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
    longText,
    prettyJson,
    preview,
    renderContent,
    renderDiff,
    resultBadge,
  } = global.CordageStudio

  /**
   * One session rendered into `root`, fed event by event (`add`), in batches (`addAll`), and with live
   * streamed text (`delta`). `options.loadChild(header)` returns a promise of a child `StoredSession`,
   * rendered when its entry is opened.
   */
  function SessionView(root, options) {
    this.options = options || {}
    this.root = root
    this.calls = new Map()
    this.orphans = []
    this.turn = 0
    this.previousTime = undefined
    this.streaming = undefined
    this.totals = { turns: 0, inputTokens: 0, outputTokens: 0, cost: undefined, first: undefined, last: undefined, ended: undefined, stopReason: '' }
    root.classList.add('session')
    this.summary = el('dl', 'summary')
    this.events = el('ol', 'events')
    this.events.setAttribute('aria-label', 'Session events')
    root.append(this.summary, this.events)
  }

  SessionView.prototype.setHeader = function (header) {
    this.header = header
    if (header) this.totals.first = timeOf(header.createdAt)
    this.updateSummary()
  }

  SessionView.prototype.updateSummary = function () {
    const header = this.header || {}
    const totals = this.totals
    const status = totals.ended ? 'ended' : this.live ? 'running' : 'unfinished'
    const duration = totals.first !== undefined && totals.last !== undefined ? totals.last - totals.first : undefined
    const rows = [
      ['Session', header.id],
      ['Status', totals.stopReason ? `${status} (${totals.stopReason})` : status],
      ['Model', header.model || ''],
      ['Turns', String(totals.turns)],
      ['Tokens', `${formatCount(totals.inputTokens)} in / ${formatCount(totals.outputTokens)} out`],
      ['Cost', formatCost(totals.cost) || '—'],
      ['Duration', formatDuration(duration) || '—'],
      ['Started', formatTime(header.createdAt)],
    ]
    const fragment = document.createDocumentFragment()
    for (const [term, value] of rows) {
      const row = el('div', 'summary-row')
      row.append(el('dt', '', term), el('dd', `summary-${term.toLowerCase()}`, value))
      fragment.append(row)
    }
    this.summary.replaceChildren(fragment)
  }

  SessionView.prototype.addAll = function (events) {
    const fragment = document.createDocumentFragment()
    for (const event of events) this.place(event, fragment)
    this.events.append(fragment)
    this.updateSummary()
  }

  SessionView.prototype.add = function (event) {
    this.place(event, this.events)
    this.updateSummary()
  }

  /** Streamed text of the turn being generated (live runs only); replaced by the stored message. */
  SessionView.prototype.delta = function (text) {
    if (!this.streaming) {
      const item = el('li', 'entry turn streaming')
      item.setAttribute('aria-live', 'polite')
      item.append(el('h3', 'turn-title', `Turn ${this.turn + 1} (streaming)`))
      const body = el('div', 'text')
      const node = document.createTextNode('')
      body.append(node)
      item.append(body)
      this.events.append(item)
      this.streaming = { item, node }
    }
    this.streaming.node.appendData(reveal(text))
  }

  SessionView.prototype.place = function (event, parent) {
    if (!event || typeof event !== 'object') return
    const time = timeOf(event.time)
    const since = time !== undefined && this.previousTime !== undefined ? time - this.previousTime : undefined
    if (time !== undefined) {
      this.totals.last = time
      this.previousTime = time
    }
    const data = event.data && typeof event.data === 'object' ? event.data : {}
    let item
    switch (event.type) {
      case 'system/message': {
        item = el('li', 'entry system')
        const details = el('details')
        details.append(el('summary', '', 'System prompt'), longText('text', data.content))
        item.append(details)
        break
      }
      case 'user/message':
        item = el('li', data.source ? 'entry user context' : 'entry user')
        item.append(el('h3', 'role', data.source ? `Context from ${stringOf(data.source)}` : 'User'), longText('text', data.content))
        break
      case 'assistant/message':
        item = this.assistant(data, since, time)
        break
      case 'tool/result':
        this.result(data, time)
        return
      case 'tool/code-dispatch':
        this.dispatch(data)
        return
      case 'session/compact':
        item = el('li', 'entry note')
        item.append(
          el(
            'p',
            '',
            `Compacted (${stringOf(data.reason)}): messages before #${stringOf(data.keepFrom)} summarized, ${Array.isArray(data.cleared) ? data.cleared.length : 0} results cleared, ${formatCount(data.tokensBefore)} → ${formatCount(data.tokensAfter)} tokens`,
          ),
        )
        if (data.summary) item.append(longText('text', data.summary))
        break
      case 'run/end': {
        item = el('li', data.stopReason === 'completed' ? 'entry run-end' : 'entry run-end stopped')
        const parts = [
          `Run ${stringOf(data.stopReason)}`,
          `${Number(data.turns) || 0} turn${data.turns === 1 ? '' : 's'}`,
          formatUsage(data.usage),
          formatCost(data.cost),
        ]
        item.append(el('p', '', parts.filter(Boolean).join(' · ')))
        this.totals.stopReason = stringOf(data.stopReason)
        break
      }
      case 'session/end':
        item = el('li', 'entry session-end')
        item.append(el('p', '', `Session ended: ${stringOf(data.reason)}${data.message ? ` (${stringOf(data.message)})` : ''}`))
        this.totals.ended = true
        break
      default:
        item = el('li', 'entry other')
        item.append(el('h3', 'role', stringOf(event.type)), longText('text', JSON.stringify(event.data, null, 2)))
    }
    parent.append(item)
  }

  SessionView.prototype.assistant = function (data, since, time) {
    if (this.streaming) {
      this.streaming.item.remove()
      this.streaming = undefined
    }
    this.turn++
    this.totals.turns++
    if (data.usage && typeof data.usage === 'object') {
      this.totals.inputTokens += Number(data.usage.inputTokens) || 0
      this.totals.outputTokens += Number(data.usage.outputTokens) || 0
    }
    if (typeof data.cost === 'number') this.totals.cost = (this.totals.cost || 0) + data.cost
    const item = el('li', 'entry turn')
    const title = el('h3', 'turn-title', `Turn ${this.turn}`)
    const facts = [data.model, formatDuration(since), formatUsage(data.usage), formatCost(data.cost), data.finishReason && `finish: ${data.finishReason}`]
    item.append(title, el('p', 'turn-meta', facts.filter(Boolean).join(' · ')))
    if (Array.isArray(data.thinking) && data.thinking.length) {
      const details = el('details', 'thinking')
      details.append(el('summary', '', 'Reasoning'))
      for (const block of data.thinking) details.append(longText('text', block && block.redacted !== undefined ? '[redacted reasoning]' : block && block.text))
      item.append(details)
    }
    if (data.content) item.append(longText('text assistant-text', data.content))
    if (Array.isArray(data.toolCalls) && data.toolCalls.length) {
      const list = el('ol', 'calls')
      list.setAttribute('aria-label', `Tool calls of turn ${this.turn}`)
      for (const call of data.toolCalls) list.append(this.call(call, time))
      item.append(list)
    }
    return item
  }

  SessionView.prototype.call = function (call, time) {
    const item = el('li', 'call pending')
    const details = el('details')
    const summary = el('summary')
    const status = badge('pending', 'running')
    const name = el('span', 'tool-name', stringOf(call && call.name))
    summary.append(name, ' ', status, ' ', el('span', 'args-preview', preview(call && call.arguments, 100)))
    details.append(summary)
    item.append(details)
    const entry = { item, details, summary, status, time, body: undefined, queued: [], childIds: new Set() }
    // The body (arguments, result, diff, nested calls) is built when the call is first opened: a long
    // session shows its turns without building thousands of closed panels.
    entry.queued.push((body) => body.append(el('h4', '', 'Arguments'), longText('args', prettyJson(call && call.arguments))))
    const build = () => {
      if (entry.body) return
      entry.body = el('div', 'call-body')
      entry.result = el('div', 'result')
      entry.nested = el('ol', 'nested')
      entry.nested.setAttribute('aria-label', 'Nested calls')
      entry.children = el('div', 'children')
      for (const build of entry.queued.splice(0)) build(entry.body, entry)
      entry.body.append(entry.result, entry.nested, entry.children)
      details.append(entry.body)
    }
    // Built on the click that opens it (so the keyboard can move into it at once), or on any other opening.
    summary.addEventListener('click', () => {
      if (!details.open) build()
    })
    details.addEventListener('toggle', () => {
      if (details.open) build()
    })
    if (call && typeof call.id === 'string') this.calls.set(call.id, entry)
    for (const orphan of this.orphans.splice(0)) this.attachChildTo(orphan)
    return item
  }

  /** Runs `build(body, entry)` now when the call's body exists, else when it is first opened. */
  function whenOpen(entry, build) {
    if (entry.body) build(entry.body, entry)
    else entry.queued.push(build)
  }

  SessionView.prototype.result = function (data, time) {
    const entry = this.calls.get(data.callId)
    if (!entry) {
      // A result without its call (a torn log): shown on its own rather than dropped.
      const item = el('li', 'entry orphan-result')
      item.append(el('h3', 'role', `Result of ${stringOf(data.name)} [${stringOf(data.callId)}]`), resultBadge(data), renderContent(data.content))
      this.events.append(item)
      return
    }
    entry.item.classList.remove('pending')
    if (data.isError) entry.item.classList.add(data.error && data.error.code === 'DENIED' ? 'denied' : 'error')
    const status = resultBadge(data)
    entry.status.replaceWith(status)
    entry.status = status
    const took = time !== undefined && entry.time !== undefined ? formatDuration(time - entry.time) : ''
    if (took) entry.summary.append(' ', el('span', 'took', took))
    whenOpen(entry, () => {
      entry.result.append(el('h4', '', data.isError ? 'Error' : 'Result'))
      if (data.isError && data.error && data.error.message) entry.result.append(longText('error-message', data.error.message))
      const diff = renderDiff(data.meta)
      if (diff) entry.result.append(diff)
      entry.result.append(renderContent(data.content))
    })
  }

  SessionView.prototype.dispatch = function (data) {
    const entry = this.calls.get(data.parentCallId)
    const build = () => {
      const item = el('li', data.isError ? 'dispatch error' : 'dispatch')
      const details = el('details')
      details.append(el('summary', '', `↳ ${stringOf(data.name)} ${data.isError ? '✗ error' : '✓'} (nested call ${(Number(data.index) || 0) + 1})`))
      details.append(el('h4', '', 'Arguments'), longText('args', JSON.stringify(data.arguments, null, 2)), renderContent(data.content))
      item.append(details)
      return item
    }
    if (entry) whenOpen(entry, () => entry.nested.append(build()))
    else this.events.append(build())
  }

  /**
   * A child session (subagent, workflow agent) nested under the call that started it, as an entry that
   * renders the child when opened. `child` is `{ header, load }` where `load()` resolves to the session.
   */
  SessionView.prototype.addChild = function (child) {
    if (!child || !child.header) return
    const callId = child.header.parent && child.header.parent.callId
    if (!this.calls.has(callId)) {
      this.orphans.push(child)
      return
    }
    this.attachChildTo(child)
  }

  SessionView.prototype.attachChildTo = function (child) {
    const entry = this.calls.get(child.header.parent.callId)
    if (!entry) {
      if (!this.orphans.includes(child)) this.orphans.push(child)
      return
    }
    if (entry.childIds.has(child.header.id)) return
    entry.childIds.add(child.header.id)
    if (!entry.item.classList.contains('has-children')) {
      entry.item.classList.add('has-children')
      entry.summary.append(' ', badge('op', 'child session'))
    }
    whenOpen(entry, () => this.childEntry(entry, child))
  }

  SessionView.prototype.childEntry = function (entry, child) {
    const details = el('details', 'child')
    details.dataset.child = child.header.id
    const tool = child.header.parent.tool ? `${child.header.parent.tool} ` : ''
    details.append(el('summary', '', `Child session: ${tool}${child.header.id}${child.header.depth ? ` (depth ${child.header.depth})` : ''}`))
    const box = el('div', 'child-body')
    details.append(box)
    let loaded = false
    details.addEventListener('toggle', () => {
      if (!details.open || loaded) return
      loaded = true
      box.append(el('p', 'note', 'Loading…'))
      Promise.resolve()
        .then(() => child.load())
        .then(
          (session) => {
            box.replaceChildren()
            const view = new SessionView(box, this.options)
            view.setHeader(session.header)
            view.addAll(session.events || [])
            if (this.options.childrenOf) for (const grandchild of this.options.childrenOf(session.header.id)) view.addChild(grandchild)
          },
          (error) => {
            loaded = false
            box.replaceChildren(el('p', 'error-message', `Could not load the child session: ${error && error.message ? error.message : error}`))
          },
        )
    })
    entry.children.append(details)
  }

  global.CordageStudio.SessionView = SessionView
})(globalThis)
