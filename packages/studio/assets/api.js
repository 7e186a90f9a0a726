// The API client of the studio page: the bearer token from the fragment, JSON calls with coded errors,
// and the messages of an events stream read with fetch (EventSource cannot send the token).
const { el } = globalThis.CordageStudio

const TOKEN_KEY = 'cordage-token'

// A token in the fragment (`#token=…`) is kept for this tab and removed from the address bar.
const fragment = new URLSearchParams(location.hash.slice(1))
if (fragment.has('token')) {
  sessionStorage.setItem(TOKEN_KEY, fragment.get('token'))
  history.replaceState(null, '', `${location.pathname}${location.search}#/`)
}

/** A failed API call: the server's `{ error: { code, message } }`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

export async function api(path, init = {}) {
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

export async function json(path, init) {
  return (await api(path, init)).json()
}

export function post(path, body) {
  return json(path, { method: 'POST', body: JSON.stringify(body) })
}

/** An API error as the page shows it: `CODE: message`, with how to pass the token on a 401. */
export function problem(error) {
  const text = `${error.code ? `${error.code}: ` : ''}${error.message || error}`
  // Without the token the whole API is closed: say how to open the page with it.
  const hint = error.status === 401 ? ' Open the address cordage serve printed with #token=<token> at the end.' : ''
  return el('p', 'error-message', text + hint)
}

/** The messages of a `text/event-stream` body: `{ event, data, id }` each. */
export async function* serverEvents(body) {
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
