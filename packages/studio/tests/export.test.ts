import { describe, expect, it } from 'vitest'
import { studioAssets } from '../src/assets.js'
import { renderSessionHtml, scriptJson } from '../src/export.js'
import { HOSTILE, richSession } from './sessions.js'

describe('renderSessionHtml', () => {
  const { session, children } = richSession()
  const html = renderSessionHtml(session, children)

  it('holds the session as JSON that no tool output can break out of', () => {
    const start = html.indexOf('<script type="application/json" id="cordage-session">')
    const end = html.indexOf('</script>', start)
    const json = html.slice(html.indexOf('>', start) + 1, end)
    // The data ends at the first closing tag, so that tag must be the real one: the JSON parses whole.
    expect(JSON.parse(json)).toEqual({ session, children })
    expect(json).not.toContain('<')
    expect(html.match(/<\/script>/g)).toHaveLength(4)
  })

  it('names no external URL at all and forbids loading one', () => {
    expect(html).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i)
    expect(html).not.toMatch(/https?:\/\//i)
    expect(html).toContain(`content="default-src 'none'`)
  })

  it('escapes the title', () => {
    const hostile = renderSessionHtml({ ...session, header: { ...session.header, id: '<b>x</b>' } })
    expect(hostile).toContain('<title>Cordage session &#60;b&#62;x&#60;/b&#62;</title>')
  })

  it('scriptJson escapes what could end a script element or a JavaScript string', () => {
    expect(scriptJson({ text: HOSTILE, line: '\u2028\u2029' })).not.toMatch(/[<>&\u2028\u2029]/)
    expect(JSON.parse(scriptJson({ text: HOSTILE, line: '\u2028' }))).toEqual({ text: HOSTILE, line: '\u2028' })
  })
})

describe('studioAssets', () => {
  it('lists every file by name with its type, in the shape the server serves', () => {
    const assets = studioAssets()
    expect(Object.keys(assets).sort()).toEqual(['api.js', 'app.js', 'export.js', 'index.html', 'prompts.js', 'render.js', 'studio.css', 'view-parts.js'])
    expect(assets['app.js']!.contentType).toBe('text/javascript; charset=utf-8')
    expect(assets['studio.css']!.contentType).toBe('text/css; charset=utf-8')
    expect(String(assets['index.html']!.body)).toContain('<script type="module" src="/studio/app.js">')
  })

  it('never parses model or tool text as markup (no innerHTML, outerHTML, insertAdjacentHTML or document.write)', () => {
    for (const [path, asset] of Object.entries(studioAssets())) {
      if (!path.endsWith('.js')) continue
      expect(String(asset.body), path).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/)
    }
  })
})
