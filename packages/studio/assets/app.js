// The live studio page of `cordage serve`: the session list, starting a run, a session followed over the
// events stream, and the approvals and questions of a waiting run answered in the page.
import { api, json, post, problem, serverEvents } from './api.js'
import { pendingPrompt } from './prompts.js'

const { SessionView, el, formatCount, formatCost, formatDuration } = globalThis.CordageStudio

const app = document.getElementById('app')
const connection = document.getElementById('connection')
let current = { dispose() {} }

function route() {
  current.dispose()
  const match = /^#\/sessions\/([\w.-]+)$/.exec(location.hash)
  current = match ? sessionPage(decodeURIComponent(match[1])) : listPage()
}

// ---- the list ------------------------------------------------------------------------------------

function listPage() {
  document.title = 'Cordage studio'
  const title = el('h1', '', 'Sessions')
  const form = runForm()
  const table = el('table', 'sessions')
  const caption = el('caption', 'visually-hidden', 'Sessions, newest first')
  const head = el('thead')
  const row = el('tr')
  for (const name of ['Session', 'Status', 'Model', 'Turns', 'Tokens', 'Cost', 'Duration', 'Started']) {
    const cell = el('th', '', name)
    cell.scope = 'col'
    row.append(cell)
  }
  head.append(row)
  const body = el('tbody')
  table.append(caption, head, body)
  const status = el('p', 'note')
  status.setAttribute('role', 'status')
  const refresh = el('button', '', 'Refresh')
  refresh.type = 'button'
  const toolbar = el('div', 'toolbar')
  toolbar.append(el('h2', '', 'Recent sessions'), refresh)
  app.replaceChildren(title, form, toolbar, status, table)
  let stopped = false
  let timer
  async function load() {
    clearTimeout(timer)
    try {
      const sessions = await json('/api/sessions?parent=none&limit=200')
      if (stopped) return
      body.replaceChildren(...sessions.map(sessionRow))
      status.textContent = sessions.length ? '' : 'No sessions yet: start a run above.'
    } catch (error) {
      if (!stopped) status.replaceChildren(problem(error))
    }
    if (!stopped) timer = setTimeout(load, 3000)
  }
  refresh.addEventListener('click', load)
  load()
  return {
    dispose() {
      stopped = true
      clearTimeout(timer)
    },
  }
}

function sessionRow(session) {
  const row = el('tr')
  const link = el('a', '', session.id)
  link.href = `#/sessions/${encodeURIComponent(session.id)}`
  const first = el('td')
  first.append(link)
  const cells = [
    el('td', `status-${session.status}`, session.pending ? `${session.status} (${session.pending} pending)` : session.status),
    el('td', '', session.model || ''),
    el('td', 'number', String(session.turns ?? 0)),
    el('td', 'number', session.usage ? `${formatCount(session.usage.inputTokens)} / ${formatCount(session.usage.outputTokens)}` : ''),
    el('td', 'number', formatCost(session.cost)),
    el('td', 'number', formatDuration(session.durationMs)),
    el('td', '', session.createdAt ? new Date(session.createdAt).toLocaleString() : ''),
  ]
  row.append(first, ...cells)
  return row
}

function runForm() {
  const form = el('form', 'run')
  form.setAttribute('aria-labelledby', 'run-title')
  const title = el('h2', '', 'Start a run')
  title.id = 'run-title'
  const promptLabel = el('label', '', 'Prompt')
  promptLabel.htmlFor = 'run-prompt'
  const prompt = el('textarea')
  prompt.id = 'run-prompt'
  prompt.name = 'prompt'
  prompt.rows = 3
  prompt.required = true
  prompt.setAttribute('aria-describedby', 'run-hint')
  const hint = el('p', 'note', 'Ctrl+Enter starts the run.')
  hint.id = 'run-hint'
  const turnsLabel = el('label', '', 'Max turns ')
  const turns = el('input')
  turns.type = 'number'
  turns.min = '1'
  turns.name = 'maxTurns'
  turnsLabel.append(turns)
  const start = el('button', 'primary', 'Start run')
  start.type = 'submit'
  const row = el('div', 'row')
  row.append(turnsLabel, start)
  const status = el('div')
  status.setAttribute('role', 'status')
  form.append(title, promptLabel, prompt, hint, row, status)
  prompt.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit()
  })
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    if (!prompt.value.trim()) {
      status.replaceChildren(problem({ message: 'Write a prompt first.' }))
      prompt.focus()
      return
    }
    start.disabled = true
    const options = turns.value ? { maxTurns: Number(turns.value) } : undefined
    try {
      const run = await post('/api/runs', { prompt: prompt.value, ...(options && { options }) })
      location.hash = `#/sessions/${encodeURIComponent(run.id)}`
    } catch (error) {
      status.replaceChildren(problem(error))
      start.disabled = false
    }
  })
  return form
}

// ---- one session ---------------------------------------------------------------------------------

function sessionPage(id) {
  document.title = `Session ${id} · Cordage studio`
  const controller = new AbortController()
  const back = el('a', '', '← All sessions')
  back.href = '#/'
  const title = el('h1', '', `Session ${id}`)
  title.id = 'session-title'
  const toolbar = el('div', 'toolbar')
  const cancel = el('button', '', 'Cancel run')
  cancel.type = 'button'
  cancel.hidden = true
  toolbar.append(cancel)
  const prompts = el('section', 'prompts')
  prompts.setAttribute('aria-label', 'Waiting for you')
  const status = el('div')
  status.setAttribute('role', 'status')
  const section = el('section', 'session-view')
  section.setAttribute('aria-labelledby', 'session-title')
  app.replaceChildren(back, title, toolbar, prompts, status, section)
  const view = new SessionView(section, { childrenOf: () => [] })
  const shownChildren = new Set()
  const open = new Map()
  cancel.addEventListener('click', async () => {
    cancel.disabled = true
    try {
      await post(`/api/runs/${encodeURIComponent(id)}/cancel`, {})
    } catch (error) {
      status.replaceChildren(problem(error))
      cancel.disabled = false
    }
  })

  async function loadChildren() {
    try {
      const children = await json(`/api/sessions?parent=${encodeURIComponent(id)}`)
      for (const child of children) {
        if (shownChildren.has(child.id)) continue
        shownChildren.add(child.id)
        const header = { id: child.id, parent: child.parent, depth: child.depth }
        view.addChild({ header, load: () => json(`/api/sessions/${encodeURIComponent(child.id)}`) })
      }
    } catch {}
  }

  function showPending(request) {
    if (open.has(request.id)) return
    const box = pendingPrompt(id, request, () => close(request.id))
    open.set(request.id, box)
    prompts.append(box)
    // A new prompt takes the focus: the user answers it without hunting for it. An approval or a plan
    // focuses itself, not its first button: a key pressed as it appears (while typing) must approve nothing.
    const first = request.kind === 'question' ? box.querySelector('button, input, textarea') : box
    if (first === box) box.tabIndex = -1
    if (first) first.focus()
  }

  function close(requestId) {
    const box = open.get(requestId)
    if (!box) return
    open.delete(requestId)
    const hadFocus = box.contains(document.activeElement)
    box.remove()
    if (hadFocus) section.querySelector('summary, button')?.focus()
  }

  async function follow(after) {
    let last = after
    let childTimer
    for (let attempt = 0; !controller.signal.aborted; attempt++) {
      try {
        const response = await api(`/api/sessions/${encodeURIComponent(id)}/events?after=${last}`, { signal: controller.signal })
        connection.textContent = 'live'
        attempt = 0
        for await (const message of serverEvents(response.body)) {
          if (message.event === 'stored') {
            const event = JSON.parse(message.data)
            if (event.seq <= last) continue
            last = event.seq
            view.add(event)
            if (event.type === 'tool/result' || event.type === 'assistant/message') {
              clearTimeout(childTimer)
              childTimer = setTimeout(loadChildren, 200)
            }
          } else if (message.event === 'delta') view.delta(JSON.parse(message.data).text)
          else if (message.event === 'pending') showPending(JSON.parse(message.data))
          else if (message.event === 'resolved') close(JSON.parse(message.data).requestId)
          else if (message.event === 'end') {
            finished()
            return
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return
        if (error.status === 404) return status.replaceChildren(problem(error))
      }
      connection.textContent = 'reconnecting…'
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 500 * 2 ** attempt)))
    }
  }

  function finished() {
    view.live = false
    view.updateSummary()
    cancel.hidden = true
    connection.textContent = ''
    for (const requestId of open.keys()) close(requestId)
    loadChildren()
  }

  ;(async () => {
    try {
      const session = await json(`/api/sessions/${encodeURIComponent(id)}`, { signal: controller.signal })
      view.setHeader(session.header)
      view.addAll(session.events)
      for (const warning of session.warnings || []) status.append(el('p', 'note', `warning: ${warning}`))
      await loadChildren()
      const last = session.events.at(-1)
      if (last && last.type === 'session/end') return finished()
      view.live = true
      view.updateSummary()
      cancel.hidden = false
      json(`/api/runs/${encodeURIComponent(id)}/pending`).then(
        (requests) => requests.forEach(showPending),
        () => {},
      )
      await follow(last ? last.seq : 0)
    } catch (error) {
      if (!controller.signal.aborted) status.replaceChildren(problem(error))
    }
  })()

  return {
    dispose() {
      controller.abort()
      connection.textContent = ''
    },
  }
}

window.addEventListener('hashchange', route)
route()
