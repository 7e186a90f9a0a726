// Boots a session exported by `cordage replay --html`: the session and its child sessions are the JSON
// in #cordage-session, rendered by the same view as the live page.
;(function () {
  'use strict'
  const { SessionView, el } = globalThis.CordageStudio
  const app = document.getElementById('app')
  let data
  try {
    data = JSON.parse(document.getElementById('cordage-session').textContent || '')
  } catch (error) {
    app.append(el('p', 'error-message', `This file holds no readable session: ${error.message}`))
    document.documentElement.dataset.rendered = 'error'
    return
  }
  const children = Array.isArray(data.children) ? data.children : []
  const byParent = new Map()
  for (const child of children) {
    const parent = child && child.header && child.header.parent && child.header.parent.session
    if (!parent) continue
    if (!byParent.has(parent)) byParent.set(parent, [])
    byParent.get(parent).push({ header: child.header, load: () => Promise.resolve(child) })
  }
  const childrenOf = (id) => byParent.get(id) || []
  const title = el('h1', '', `Session ${data.session.header.id}`)
  const section = el('section', 'session-view')
  section.setAttribute('aria-labelledby', 'session-title')
  title.id = 'session-title'
  app.append(title, section)
  const view = new SessionView(section, { childrenOf })
  view.setHeader(data.session.header)
  view.addAll(data.session.events || [])
  for (const child of childrenOf(data.session.header.id)) view.addChild(child)
  document.documentElement.dataset.rendered = 'true'
})()
