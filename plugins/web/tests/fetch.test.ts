import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { Spill } from '@cordage/plugin-spill'
import { codeOf, loadWeb, serve, textOf, valueOf } from './helpers.js'

const page = `<!doctype html><html><head><title>The  Title</title><style>body{}</style></head><body>
<nav>Home | About</nav>
<article><h1>Heading</h1><p>First <b>bold</b> paragraph with a <a href="/next">relative link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre><code>const x = 1</code></pre>
<img src="data:image/png;base64,${'A'.repeat(5000)}" alt="inline"><img src="pic.png" alt="pic"></article>
<script>window.steal()</script><noscript>enable js</noscript></body></html>`

const html =
  (body: string, type = 'text/html; charset=utf-8') =>
  (_request: unknown, response: any) =>
    response.writeHead(200, { 'content-type': type }).end(body)

describe('web_fetch', () => {
  it('converts an HTML page to Markdown with its title, absolute links and no scripts', async () => {
    const server = await serve(html(page))
    const { call } = await loadWeb({ readability: false })
    const result = await call('web_fetch', { url: `${server.url}/docs/page` })
    const value = valueOf(result)
    expect(value).toMatchObject({
      url: `${server.url}/docs/page`,
      finalUrl: `${server.url}/docs/page`,
      status: 200,
      contentType: 'text/html; charset=utf-8',
      title: 'The Title',
      truncated: false,
    })
    expect(value.content).toContain('# Heading')
    expect(value.content).toContain('First **bold** paragraph')
    expect(value.content).toContain(`[relative link](${server.url}/next)`)
    expect(value.content).toContain('```\nconst x = 1\n```')
    expect(value.content).toContain(`![pic](${server.url}/docs/pic.png)`)
    expect(value.content).not.toMatch(/steal|enable js|body\{\}|AAAA/)
    expect(textOf(result)).toBe(`Fetched ${server.url}/docs/page (HTTP 200, text/html)\nTitle: The Title\n\n${value.content}`)
  })

  it('keeps the main content with Readability and drops the navigation', async () => {
    const article = `<html><head><title>News</title></head><body><nav><a href="/">Home</a> <a href="/a">About</a></nav>
      <div class="sidebar">Subscribe now</div><article><h2>Story</h2>${'<p>Long readable sentence about the subject at hand, repeated for length. </p>'.repeat(12)}</article></body></html>`
    const server = await serve(html(article))
    const { call } = await loadWeb()
    const value = valueOf(await call('web_fetch', { url: server.url }))
    expect(value.content).toContain('Long readable sentence')
    expect(value.content).not.toContain('Subscribe now')
    expect(value.content).not.toContain('About')
  })

  it('extracts the main content of a page of thousands of elements too', async () => {
    const big = `<html><body><nav>Site menu</nav><article>${'<p><span>cell</span></p>'.repeat(6000)}</article></body></html>`
    const server = await serve(html(big))
    const { call } = await loadWeb()
    const content = valueOf(await call('web_fetch', { url: server.url })).content
    expect(content).not.toContain('Site menu')
    expect(content.match(/cell/g)).toHaveLength(6000)
  })

  it('returns plain text or the HTML source on request', async () => {
    const server = await serve(html(page))
    const { call } = await loadWeb({ readability: false })
    const text = valueOf(await call('web_fetch', { url: server.url, format: 'text' })).content
    expect(text).toContain('Heading\n\nFirst bold paragraph with a relative link.')
    expect(text).not.toContain('steal')
    expect(valueOf(await call('web_fetch', { url: server.url, format: 'html' })).content).toBe(page)
  })

  it('returns a non-2xx response as a result with its status', async () => {
    const server = await serve((_request, response) => response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page'))
    const { call } = await loadWeb()
    const result = await call('web_fetch', { url: server.url })
    expect(valueOf(result)).toMatchObject({ status: 404, content: 'no such page' })
    expect(textOf(result)).toBe(`Fetched ${server.url}/ (HTTP 404, text/plain)\n\nno such page`)
  })

  it('passes JSON and plain text through and refuses binary types', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/json') response.writeHead(200, { 'content-type': 'application/json' }).end('{"a":[1,2]}')
      else if (request.url === '/plain') response.end('untyped but text')
      else if (request.url === '/png') response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]))
      else response.end(Buffer.from([0, 1, 2, 255, 254]))
    })
    const { call } = await loadWeb()
    expect(valueOf(await call('web_fetch', { url: `${server.url}/json` })).content).toBe('{"a":[1,2]}')
    expect(valueOf(await call('web_fetch', { url: `${server.url}/plain` })).content).toBe('untyped but text')
    const png = await call('web_fetch', { url: `${server.url}/png` })
    expect(codeOf(png)).toBe('WEB_UNSUPPORTED_CONTENT_TYPE')
    expect(textOf(png)).toContain('unsupported content type "image/png"')
    expect(codeOf(await call('web_fetch', { url: `${server.url}/binary` }))).toBe('WEB_UNSUPPORTED_CONTENT_TYPE')
  })

  it('decodes declared charsets and refuses unknown ones', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/latin1')
        response.writeHead(200, { 'content-type': 'text/plain; charset=windows-1252' }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]))
      else if (request.url === '/meta')
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            Buffer.concat([
              Buffer.from('<html><head><meta charset="iso-8859-1"><title>Caf'),
              Buffer.from([0xe9]),
              Buffer.from('</title></head><body><p>x</p></body></html>'),
            ]),
          )
      else if (request.url === '/unknown') response.writeHead(200, { 'content-type': 'text/plain; charset=klingon-42' }).end('still readable ✓')
      else response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(Buffer.from([0x61, 0xff, 0xfe, 0x62]))
    })
    const { call } = await loadWeb()
    expect(valueOf(await call('web_fetch', { url: `${server.url}/latin1` })).content).toBe('café €')
    expect(valueOf(await call('web_fetch', { url: `${server.url}/meta` })).title).toBe('Café')
    expect(codeOf(await call('web_fetch', { url: `${server.url}/unknown` }))).toBe('WEB_UNSUPPORTED_CHARSET')
    expect(valueOf(await call('web_fetch', { url: `${server.url}/broken` })).content).toBe('a\uFFFD\uFFFDb')
  })

  it('decompresses gzip and caps the decompressed bytes', async () => {
    const bomb = gzipSync(Buffer.alloc(50_000_000, 'a'))
    const server = await serve((request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
      response.end(request.url === '/bomb' ? bomb : gzipSync('zipped text'))
    })
    const { call } = await loadWeb({ maxBytes: 100_000 })
    expect(valueOf(await call('web_fetch', { url: `${server.url}/small` })).content).toBe('zipped text')
    const value = valueOf(await call('web_fetch', { url: `${server.url}/bomb` }))
    expect(value.truncated).toBe(true)
    expect(value.content.length).toBe(100_000)
  })

  it('stops reading a huge body at maxBytes and closes the connection', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      const chunk = 'x'.repeat(65_536)
      // An endless body: only a closed connection stops it.
      const pump = () => {
        while (response.write(chunk));
      }
      response.on('drain', pump)
      pump()
    })
    const { call } = await loadWeb()
    const result = await call('web_fetch', { url: server.url, maxBytes: 200_000 })
    expect(valueOf(result)).toMatchObject({ truncated: true })
    expect(valueOf(result).content.length).toBe(200_000)
    expect(textOf(result)).toMatch(
      /\(Truncated: the response was cut after 200000 bytes\. Pass a larger maxBytes or fetch a more specific URL for the rest\.\)$/,
    )
    await expect.poll(() => server.aborted).toBe(1)
  })

  it('caps maxBytes at the plugin limit', async () => {
    const server = await serve(html('y'.repeat(5000), 'text/plain'))
    const { call } = await loadWeb({ maxBytes: 1024 })
    expect(valueOf(await call('web_fetch', { url: server.url, maxBytes: 1_000_000 })).content).toHaveLength(1024)
  })

  it('fails a slow body with WEB_FETCH_TIMEOUT at the deadline', async () => {
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.write('first bytes… ')
    })
    const { call } = await loadWeb({ timeoutMs: 300 })
    const result = await call('web_fetch', { url: server.url })
    expect(codeOf(result)).toBe('WEB_FETCH_TIMEOUT')
    await expect.poll(() => server.aborted).toBe(1)
  })

  it('follows redirects up to the limit and reports the final URL', async () => {
    const server = await serve((request, response) => {
      const n = Number(request.url!.slice(1) || 0)
      if (n < 10) response.writeHead(302, { location: `/${n + 1}` }).end()
      else response.end('landed')
    })
    const { call } = await loadWeb({ maxRedirects: 10 })
    const result = await call('web_fetch', { url: `${server.url}/0` })
    expect(valueOf(result)).toMatchObject({ finalUrl: `${server.url}/10`, content: 'landed' })
    expect(textOf(result)).toContain(`Fetched ${server.url}/10 (redirected from ${server.url}/0)`)
    const limited = await loadWeb({ maxRedirects: 3 })
    const tooMany = await limited.call('web_fetch', { url: `${server.url}/0` })
    expect(codeOf(tooMany)).toBe('WEB_TOO_MANY_REDIRECTS')
    expect(textOf(tooMany)).toContain('exceeded the maximum of 3 redirects')
  })

  it('falls back to text for absurdly deep markup instead of crashing', async () => {
    const deep = `<html><body>${'<div>'.repeat(20_000)}deep text${'</div>'.repeat(20_000)}</body></html>`
    const server = await serve(html(deep))
    const { call } = await loadWeb()
    expect(valueOf(await call('web_fetch', { url: server.url })).content).toBe('deep text')
  })

  it('reports refused connections and unknown hosts as WEB_FETCH_FAILED', async () => {
    const gone = await serve(() => undefined)
    await gone.close()
    const { call } = await loadWeb()
    const refused = await call('web_fetch', { url: gone.url })
    expect(codeOf(refused)).toBe('WEB_FETCH_FAILED')
    expect(textOf(refused)).toContain('the connection was refused')
    const unknown = await call('web_fetch', { url: 'http://no-such-host.invalid/' })
    expect(codeOf(unknown)).toBe('WEB_FETCH_FAILED')
  })

  it('stops the request when the caller aborts', async () => {
    const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).write('…'))
    const { call } = await loadWeb()
    const controller = new AbortController()
    const pending = call('web_fetch', { url: server.url }, controller.signal)
    await expect.poll(() => server.requests.length).toBe(1)
    controller.abort()
    expect(codeOf(await pending)).toBe('ABORTED')
    await expect.poll(() => server.aborted).toBe(1)
  })

  it('unloading the plugin aborts fetches in flight and removes its tools', async () => {
    const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).write('…'))
    const { ctx, fiber, call } = await loadWeb()
    const pending = call('web_fetch', { url: server.url })
    await expect.poll(() => server.requests.length).toBe(1)
    await fiber.dispose()
    expect((await pending).isError).toBe(true)
    await expect.poll(() => server.aborted).toBe(1)
    expect(ctx.tools.get('web_fetch')).toBeUndefined()
    expect(ctx.get('web')).toBeUndefined()
  })

  it('leaves a long page to the spill policy: a bounded preview inline, the whole text in the spill file', async () => {
    const words = Array.from({ length: 5000 }, (_, i) => `word${i}`).join(' ')
    const server = await serve(html(words, 'text/plain'))
    const dir = await mkdtemp(join(tmpdir(), 'cordage-web-spill-'))
    try {
      const { ctx, call } = await loadWeb()
      await ctx.plugin(Spill, { dir, maxInlineBytes: 4000, headBytes: 1500, tailBytes: 1500 })
      const result = await call('web_fetch', { url: server.url })
      expect(valueOf(result).content).toBe(words)
      const text = textOf(result)
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4000)
      expect(text.startsWith(`Fetched ${server.url}/ (HTTP 200, text/plain)`)).toBe(true)
      const file = /Full output: (.+?)\. Read it/.exec(text)?.[1]
      expect(await readFile(file!, 'utf8')).toContain(words)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('rejects a blank URL as invalid arguments', async () => {
    const { call } = await loadWeb()
    expect(codeOf(await call('web_fetch', { url: '  ' }))).toBe('INVALID_ARGS')
    expect(codeOf(await call('web_fetch', { url: 'http://x', format: 'pdf' }))).toBe('INVALID_ARGS')
  })
})
