// Pages, encodings and addresses written to hurt the host: none may stall its event loop, exhaust its
// memory, crash it or reach what it must not.
import { readdirSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { codeOf, loadWeb, ping, serve, textOf, valueOf } from './helpers.js'

const paragraphs = `<html><head><title>Flood</title></head><body>${'<p>x</p>'.repeat(400_000)}</body></html>`
const nested = `<html><body>${'<div>'.repeat(100_000)}deep text${'</div>'.repeat(100_000)}</body></html>`
// Under the tree limits: a page the whole pipeline runs on (parse, main content, Markdown).
const rich = (count: number) =>
  `<html><body><article>${'<p><span>cell</span> <b>bold</b> and <a href="/x">a link</a></p>'.repeat(count)}</article></body></html>`
const heavy = rich(4_000)
// 96 000 elements: a tree of them needs more than the smallest heap a conversion thread may have.
const heavier = rich(24_000)

const html =
  (body: string | Buffer, headers: Record<string, string> = {}) =>
  (_request: unknown, response: any) =>
    response.writeHead(200, { 'content-type': 'text/html', ...headers }).end(body)

/** Threads of this process (the conversion workers are threads of it). */
const threads = () => readdirSync('/proc/self/task').length

/**
 * Runs `work` while calling `ping` through the registry every few milliseconds; returns its result and the
 * longest wait between two answers, so a stalled event loop shows whether or not a call was in flight
 * when it stalled. The bound asserted on it only detects a stall: the figure is the benchmark's.
 */
async function whileProbing<T>(call: (name: string, args: unknown) => Promise<unknown>, work: Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let done = false
  let slowestMs = 0
  const probe = (async () => {
    let last = performance.now()
    // One more answer after the work ends: a stall that ended with it is measured too.
    for (;;) {
      await call('ping', {})
      const now = performance.now()
      slowestMs = Math.max(slowestMs, now - last)
      last = now
      if (done) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  const result = await work.finally(() => (done = true))
  await probe
  return { result, slowestMs }
}

describe('web_fetch on hostile pages', () => {
  it.each([
    ['400 000 paragraphs (3.2 MB)', paragraphs, (content: string) => expect(content.match(/x/g)).toHaveLength(400_000)],
    ['100 000 nested elements', nested, (content: string) => expect(content).toBe('deep text')],
    ['4 000 rich paragraphs through a DOM', heavy, (content: string) => expect(content.match(/\*\*bold\*\*/g)).toHaveLength(4_000)],
  ])(
    'converts %s while the host keeps answering',
    async (_label, page, check) => {
      const server = await serve(html(page))
      // A budget a loaded machine meets: this test is about the host, not the budget.
      const { ctx, call } = await loadWeb({ convertTimeoutMs: 50_000, timeoutMs: 55_000 })
      ctx.tools.register(ping)
      const { result, slowestMs } = await whileProbing(call, call('web_fetch', { url: server.url }))
      check(valueOf(result).content)
      // The previous, in-thread conversion held the event loop for seconds to minutes on each of these; a probe
      // waits some 30 ms on a loaded machine. A stall detector with more than 10× to spare, not a timing.
      expect(slowestMs).toBeLessThan(2000)
    },
    60_000,
  )

  it('gives the memory of a large page back once it is converted', async () => {
    const server = await serve(html(paragraphs))
    const { call } = await loadWeb()
    const before = { threads: threads(), rss: process.memoryUsage().rss }
    expect(valueOf(await call('web_fetch', { url: server.url })).title).toBe('Flood')
    // The thread that converted it is replaced, and its heap goes with it.
    await expect.poll(threads, { timeout: 10_000 }).toBe(before.threads)
    expect(process.memoryUsage().rss - before.rss).toBeLessThan(300 << 20)
  })

  it('stops a conversion past its time budget and frees its thread', async () => {
    const server = await serve(html(heavy))
    const { call } = await loadWeb({ convertTimeoutMs: 1 })
    const before = threads()
    const result = await call('web_fetch', { url: server.url })
    expect(codeOf(result)).toBe('WEB_CONVERSION_LIMIT')
    expect(textOf(result)).toContain('converting the page took longer than 1 ms and was stopped')
    await expect.poll(threads, { timeout: 10_000 }).toBe(before)
  })

  it('stops a conversion past its memory budget without harm to the host, and converts the next page', async () => {
    const server = await serve((request, response) => html(request.url === '/heavy' ? heavier : '<p>small <b>page</b></p>')(request, response))
    const { call } = await loadWeb({ convertMemoryMb: 32 })
    const result = await call('web_fetch', { url: `${server.url}/heavy` })
    expect(codeOf(result)).toBe('WEB_CONVERSION_LIMIT')
    expect(textOf(result)).toContain('converting the page needed more than 32 MB and was stopped')
    expect(valueOf(await call('web_fetch', { url: `${server.url}/small` })).content).toBe('small **page**')
  })

  it('counts conversion within timeoutMs', async () => {
    // 5 MB of markup: reading it (format html: fetch and decode) takes a fraction of converting it.
    const server = await serve(html(`<html><body>${'<p>x</p>'.repeat(620_000)}</body></html>`))
    const reader = await loadWeb()
    const reads: number[] = []
    for (let round = 0; round < 3; round++) {
      const started = performance.now()
      expect(valueOf(await reader.call('web_fetch', { url: server.url, format: 'html' })).truncated).toBe(false)
      reads.push(performance.now() - started)
    }
    const readMs = reads.sort((a, b) => a - b)[1]!
    // A deadline the read meets three times over, and the conversion does not.
    const { call } = await loadWeb({ timeoutMs: Math.ceil(readMs * 3) + 20 })
    expect(codeOf(await call('web_fetch', { url: server.url }))).toBe('WEB_FETCH_TIMEOUT')
  })

  it('terminates the conversion thread when the caller aborts', async () => {
    const server = await serve(html(heavy))
    const { call } = await loadWeb()
    const before = threads()
    const controller = new AbortController()
    const pending = call('web_fetch', { url: server.url }, controller.signal)
    await expect.poll(threads, { timeout: 10_000 }).toBe(before + 1)
    controller.abort()
    expect(codeOf(await pending)).toBe('ABORTED')
    expect(threads()).toBe(before)
  })

  it('unloading the plugin terminates a conversion in progress', async () => {
    const server = await serve(html(heavy))
    const { fiber, call } = await loadWeb()
    const before = threads()
    const pending = call('web_fetch', { url: server.url })
    await expect.poll(threads, { timeout: 10_000 }).toBe(before + 1)
    await fiber.dispose()
    expect(threads()).toBe(before)
    expect((await pending).isError).toBe(true)
  })

  it('unloading the plugin terminates an idle conversion thread', async () => {
    const server = await serve(html('<p>hello</p>'))
    const { fiber, call } = await loadWeb()
    const before = threads()
    expect(valueOf(await call('web_fetch', { url: server.url })).content).toBe('hello')
    expect(threads()).toBe(before + 1)
    await fiber.dispose()
    expect(threads()).toBe(before)
  })

  it('refuses an unknown charset with a coded error', async () => {
    const server = await serve((request, response) => {
      if (request.url === '/header') html('+ADw-html+AD4-hi', { 'content-type': 'text/html; charset=utf-7' })(request, response)
      else html('<html><head><meta charset="utf-7"></head><body>+ADw-script+AD4-</body></html>')(request, response)
    })
    const { call } = await loadWeb()
    for (const path of ['/header', '/meta']) {
      const result = await call('web_fetch', { url: `${server.url}${path}` })
      expect(codeOf(result), path).toBe('WEB_UNSUPPORTED_CHARSET')
      expect(textOf(result)).toContain('declares the charset "utf-7", which web_fetch cannot decode')
    }
  })

  it('converts an HTML body without a single element', async () => {
    const server = await serve(html('just words &amp; an entity'))
    const { call } = await loadWeb()
    expect(valueOf(await call('web_fetch', { url: server.url })).content).toBe('just words & an entity')
  })

  it('decodes stacked content encodings', async () => {
    const server = await serve(html(gzipSync(gzipSync('<p>twice <b>zipped</b></p>')), { 'content-encoding': 'gzip, gzip' }))
    const { call } = await loadWeb()
    expect(valueOf(await call('web_fetch', { url: server.url })).content).toBe('twice **zipped**')
  })

  it('caps the decompressed bytes of stacked encodings', async () => {
    const bomb = gzipSync(gzipSync(Buffer.alloc(50_000_000, 'a')))
    const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip, gzip' }).end(bomb))
    const { call } = await loadWeb({ maxBytes: 100_000 })
    const value = valueOf(await call('web_fetch', { url: server.url }))
    expect(value).toMatchObject({ truncated: true })
    expect(value.content).toBe('a'.repeat(100_000))
  })

  it.each([
    ['an unknown coding', 'compress'],
    ['more than three layers', 'gzip, gzip, gzip, gzip'],
  ])('refuses %s instead of returning compressed bytes as text', async (_label, encoding) => {
    const server = await serve(html(gzipSync('<p>zipped</p>'), { 'content-encoding': encoding }))
    const { call } = await loadWeb()
    const result = await call('web_fetch', { url: server.url })
    expect(codeOf(result)).toBe('WEB_UNSUPPORTED_ENCODING')
    expect(textOf(result)).toContain(`the response is encoded as ${JSON.stringify(encoding)}`)
  })

  it('reports a corrupt inner layer of stacked encodings as a failed fetch', async () => {
    const server = await serve(html(gzipSync('not gzip inside'), { 'content-encoding': 'gzip, gzip' }))
    const { call } = await loadWeb()
    expect(codeOf(await call('web_fetch', { url: server.url }))).toBe('WEB_FETCH_FAILED')
  })
})
