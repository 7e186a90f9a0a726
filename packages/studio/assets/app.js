// The live studio page of `cordage serve`: the session list, starting a run, a session followed over the
// events stream, and the approvals and questions of a waiting run answered in the page.
const { SessionView, el, formatCount, formatCost, formatDuration } = globalThis.CordageStudio

const app = document.getElementById('app')
const connection = document.getElementById('connection')
const TOKEN_KEY = 'cordage-token'

// A token in the fragment (`#token=…`) is kept for this tab and removed from the address bar.
const fragment = new URLSearchParams(location.hash.slice(1))
if (fragment.has('token')) {
  sessionStorage.setItem(TOKEN_KEY, fragment.get('token'))
  history.replaceState(null, '', `${location.pathname}${location.search}#/`)
}

/** A failed API call: the server's `{ error: { code, message } }`. */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

async function api(path, init = {}) {
  const headers = new Headers(init.headers)
  const token = sessionStorage.getItem(TOKEN_KEY)
  if (token) headers.set('Authorization', `Bearer ${token}`)
  if (init.body !== undefined) headers.set('Content-Type', 'application/json')
  const response = await fetch(path, { ...init, headers })
  if (response.ok) return response
  let error = {}
  try {
    error = (await response.json()).error || {}
  } catch {}
  throw new ApiError(response.status, error.code || `HTTP_${response.status}`, error.message || response.statusText)
}

async function json(path, init) {
  return (await api(path, init)).json()
}

function post(path, body) {
  return json(path, { method: 'POST', body: JSON.stringify(body) })
}

let current = { dispose() {} }

function route() {
  current.dispose()
  const match = /^#\/sessions\/([\w.-]+)$/.exec(location.hash)
  current = match ? sessionPage(decodeURIComponent(match[1])) : listPage()
}

function problem(error) {
  const text = `${error.code ? `${error.code}: ` : ''}${error.message || error}`
  // Without the token the whole API is closed: say how to open the page with it.
  const hint = error.status === 401 ? ' Open the address cordage serve printed with #token=<token> at the end.' : ''
  return el('p', 'error-message', text + hint)
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
    // A new prompt takes the focus: the user answers it without hunting for it.
    const first = box.querySelector('button, input, textarea')
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

/** The messages of a `text/event-stream` body: `{ event, data, id }` each. */
async function* serverEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += value
      let end
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + (buffer[end] === '\r' ? 4 : 2))
        const message = { event: 'message', data: '', id: undefined }
        const data = []
        for (const line of block.split(/\r?\n/)) {
          if (!line || line.startsWith(':')) continue
          const colon = line.indexOf(':')
          const field = colon < 0 ? line : line.slice(0, colon)
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
          if (field === 'event') message.event = value
          else if (field === 'data') data.push(value)
          else if (field === 'id') message.id = value
        }
        if (!data.length) continue
        message.data = data.join('\n')
        yield message
      }
    }
  } finally {
    reader.cancel().catch(() => {})
  }
}

// ---- approvals, questions and plans --------------------------------------------------------------

function pendingPrompt(runId, request, done) {
  const box = el('section', 'prompt')
  const headingId = `prompt-${request.id}`
  box.setAttribute('role', 'group')
  box.setAttribute('aria-labelledby', headingId)
  const heading = el('h2')
  heading.id = headingId
  const status = el('div')
  status.setAttribute('role', 'status')
  const actions = el('div', 'actions')
  async function answer(value, buttons) {
    for (const button of buttons) button.disabled = true
    try {
      await post(`/api/runs/${encodeURIComponent(runId)}/answers`, { requestId: request.id, answer: value })
      done()
    } catch (error) {
      if (error.code === 'ALREADY_ANSWERED' || error.code === 'REQUEST_NOT_FOUND') return done()
      status.replaceChildren(problem(error))
      for (const button of buttons) button.disabled = false
    }
  }
  function button(text, className, value, label) {
    const node = el('button', className, text)
    node.type = 'button'
    if (label) node.setAttribute('aria-label', label)
    node.addEventListener('click', () => answer(typeof value === 'function' ? value() : value, actions.querySelectorAll('button')))
    return node
  }
  if (request.kind === 'approval') {
    heading.textContent = `Approve ${request.tool}?`
    box.append(heading)
    if (request.reason) box.append(el('p', '', request.reason))
    box.append(el('h3', '', 'Arguments'), el('pre', 'args', JSON.stringify(request.arguments, null, 2)))
    actions.append(
      button('Allow', 'primary', 'allow', `Allow ${request.tool} this once`),
      button('Always allow', '', 'always', `Always allow ${request.tool}`),
      button('Deny', '', 'deny', `Deny ${request.tool}`),
    )
  } else if (request.kind === 'question') {
    heading.textContent = request.questions.length === 1 ? 'A question for you' : `${request.questions.length} questions for you`
    box.append(heading)
    const readers = request.questions.map((question, index) => questionFields(box, question, `${request.id}-${index}`))
    actions.append(button('Answer', 'primary', () => readers.map((read) => read())))
  } else if (request.kind === 'plan') {
    heading.textContent = 'Review the plan'
    box.append(heading, el('pre', 'plan', request.plan))
    const label = el('label', '', 'Feedback (when keeping the plan in planning)')
    const feedback = el('textarea')
    feedback.rows = 2
    label.append(feedback)
    box.append(label)
    actions.append(
      button('Approve plan', 'primary', { approved: true }),
      button('Keep planning', '', () => (feedback.value ? { approved: false, feedback: feedback.value } : { approved: false })),
    )
  } else {
    heading.textContent = `Unknown request ${request.kind}`
    box.append(heading)
  }
  box.append(actions, status)
  return box
}

function questionFields(box, question, key) {
  const fieldset = el('fieldset')
  fieldset.append(el('legend', '', question.header ? `${question.header}: ${question.question}` : question.question))
  const inputs = []
  question.options.forEach((option, index) => {
    const label = el('label')
    const input = el('input')
    input.type = question.multiSelect ? 'checkbox' : 'radio'
    input.name = key
    input.value = option.label
    input.id = `${key}-${index}`
    label.htmlFor = input.id
    label.append(` ${option.label}`)
    if (option.description) label.append(el('span', 'note', ` — ${option.description}`))
    const line = el('div')
    line.append(input, label)
    fieldset.append(line)
    inputs.push(input)
  })
  const customLabel = el('label', '', 'Other answer ')
  const custom = el('input')
  custom.type = 'text'
  customLabel.append(custom)
  fieldset.append(customLabel)
  box.append(fieldset)
  return () => ({
    id: question.id,
    selected: inputs.filter((input) => input.checked).map((input) => input.value),
    ...(custom.value && { custom: custom.value }),
  })
}

window.addEventListener('hashchange', route)
route()
