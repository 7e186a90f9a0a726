import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { chromium, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { project } from './helpers.js'
import { start, waitFor, type Running } from './processes.js'

const CHROMIUM = process.env.CORDAGE_CHROMIUM ?? '/usr/bin/chromium'
const skipReason = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}: run \`bash scripts/services.sh start\``
if (skipReason) console.warn(`skipping the studio browser test: ${skipReason}`)
const ARTIFACTS = fileURLToPath(new URL('../../../.artifacts/studio/', import.meta.url))
const TOKEN = 'studio-test-token-4f1c'
const STREAMED = 'Let me write the greeting file, one small piece of text at a time, so you can watch it arrive.'

describe.skipIf(skipReason)('the studio in Chromium, served by cordage serve', { timeout: 180_000 }, () => {
  let model: FakeOpenAIServer
  let cli: Running
  let url: string
  let context: BrowserContext
  let close: () => Promise<void>
  const dir = project({
    // Writing asks first: the page must show the approval and the user answers it there.
    'cordage.yml': `serve: { token: ${TOKEN} }\nplugins:\n  '@cordage/plugin-policy': { rules: [{ tool: write, action: ask, reason: 'writes need a yes' }] }\n  '@cordage/plugin-fs': {}\n  '@cordage/plugin-interaction': {}\n`,
  })

  beforeAll(async () => {
    model = await startFakeOpenAI([
      {
        text: STREAMED,
        chunkSize: 3,
        delayMs: 60,
        toolCalls: [{ id: 'call_write', name: 'write', arguments: { path: 'hello.txt', content: 'hello from the studio\n' } }],
      },
      { text: 'The file is written.', delayMs: 20 },
    ])
    cli = start(['serve', '--port', '0', '--base-url', model.baseURL, '--no-key', '--model', 'fake-model'], dir)
    if (!(await waitFor(() => cli.stdout().includes('\n') || cli.child.exitCode !== null, 30_000)))
      throw new Error(`cordage serve did not start: ${cli.stderr()}`)
    url = cli.stdout().split('\n')[0]!
    const profile = mkdtempSync(join(tmpdir(), 'cordage-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1200, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    close = async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  })

  afterAll(async () => {
    await close?.()
    if (cli && cli.child.exitCode === null) {
      cli.child.kill('SIGTERM')
      await cli.exited
    }
    await model?.close()
  })

  it('starts a run from the page, streams its text and tool call, takes the approval from the keyboard, and lists it after a reload', async () => {
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    // The token arrives in the fragment, never in a request line, and is kept for the tab.
    await page.goto(`${url}/#token=${TOKEN}`)
    expect(page.url()).toBe(`${url}/#/`)
    await page.getByText('No sessions yet: start a run above.').waitFor({ timeout: 30_000 })

    // Keyboard only: the prompt is labelled, Ctrl+Enter starts the run.
    const prompt = page.getByLabel('Prompt')
    await prompt.focus()
    await page.keyboard.type('Write hello.txt')
    await page.keyboard.press('Control+Enter')
    await page.waitForURL(/#\/sessions\/[\w.-]+$/, { timeout: 30_000 })
    const id = decodeURIComponent(page.url().split('#/sessions/')[1]!)

    // The text streams in before the turn is stored: some of it, not yet all of it.
    const streaming = page.locator('.entry.streaming .text')
    await streaming.waitFor({ timeout: 30_000 })
    const partial = (await streaming.textContent())!
    expect(STREAMED.startsWith(partial)).toBe(true)
    expect(partial.length).toBeLessThan(STREAMED.length)
    await page.screenshot({ path: shot('live-streaming.png') })

    // The stored turn replaces it; the write call waits for the approval, which takes the focus.
    const call = page.locator('li.call').first()
    await call.waitFor({ timeout: 30_000 })
    expect(await page.locator('.assistant-text').first().textContent()).toBe(STREAMED)
    expect(await call.locator('.tool-name').textContent()).toBe('write')
    expect(await call.locator('.badge').first().textContent()).toBe('running')
    const allow = page.getByRole('button', { name: 'Allow write this once' })
    await allow.waitFor({ timeout: 30_000 })
    // The prompt takes the focus, not its Allow button: a key pressed as it appears (typing elsewhere) approves nothing.
    const approval = page.getByRole('group', { name: 'Approve write?' })
    await expect
      .poll(() => page.evaluate('document.activeElement && document.activeElement.getAttribute("aria-labelledby")'), { timeout: 10_000 })
      .toMatch(/^prompt-/)
    expect(await approval.textContent()).toContain('writes need a yes')
    await page.keyboard.press('Enter')
    await page.keyboard.press(' ')
    await page.screenshot({ path: shot('live-approval.png') })
    // Still unanswered (an answer disables the buttons at once): Tab reaches an enabled Allow, and Enter there approves.
    await page.keyboard.press('Tab')
    expect(await focusedLabel(page)).toBe('Allow write this once')
    expect(await allow.isEnabled()).toBe(true)
    await page.keyboard.press('Enter')

    // The run goes on and finishes: the call succeeded, the file exists, the session ended.
    await page.locator('.entry.session-end').waitFor({ timeout: 30_000 })
    expect(await page.getByRole('group', { name: 'Approve write?' }).count()).toBe(0)
    expect(await call.locator('.badge').first().textContent()).toBe('ok')
    expect(await page.locator('.assistant-text').last().textContent()).toBe('The file is written.')
    expect(await page.locator('.summary-status').textContent()).toBe('ended (completed)')
    expect(await page.locator('.summary-turns').textContent()).toBe('2')
    expect(readFileSync(join(dir, 'hello.txt'), 'utf8')).toBe('hello from the studio\n')
    await call.locator('summary').first().press('Enter')
    await call.locator('.diff-lines').waitFor({ timeout: 10_000 })
    expect(await call.locator('.diff figcaption .path').textContent()).toBe('hello.txt')
    await page.screenshot({ path: shot('live-finished.png'), fullPage: true })

    // A reload keeps the token (sessionStorage) and lists the finished session.
    await page.goto(`${url}/#/`)
    await page.reload()
    const row = page.locator('table.sessions tbody tr', { hasText: id })
    await row.waitFor({ timeout: 30_000 })
    const cells = await row.locator('td').allTextContents()
    expect(cells.slice(0, 4)).toEqual([id, 'ended', 'openai:fake-model', '2'])
    await page.screenshot({ path: shot('live-list.png') })
    // Opening it from the list shows the same view.
    await row.getByRole('link', { name: id }).press('Enter')
    await page.locator('.entry.session-end').waitFor({ timeout: 30_000 })
    expect(await page.locator('.assistant-text').first().textContent()).toBe(STREAMED)
    expect(errors).toEqual([])
  })

  it('answers a question with the keyboard, and cancels a waiting run from the page', async () => {
    const questions = [{ id: 'color', question: 'Which color?', options: [{ label: 'red' }, { label: 'blue', description: 'the calm one' }] }]
    model.push({ toolCalls: [{ id: 'call_ask', name: 'ask_user_question', arguments: { questions } }] }, { text: 'Blue it is.' })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${url}/#token=${TOKEN}`)
    await page.getByLabel('Prompt').fill('Ask me a color')
    await page.getByRole('button', { name: 'Start run' }).press('Enter')
    // The question's first option takes the focus; arrows choose, Tab leaves the group for the free answer, then Answer.
    await page.getByRole('group', { name: 'A question for you' }).waitFor({ timeout: 30_000 })
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.value'), { timeout: 10_000 }).toBe('red')
    await page.keyboard.press('ArrowDown')
    expect(await page.getByLabel('blue').isChecked()).toBe(true)
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement.type')).toBe('text')
    await page.keyboard.press('Tab')
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Answer')
    await page.keyboard.press('Enter')
    await page.locator('.entry.session-end').waitFor({ timeout: 30_000 })
    expect(await page.locator('.assistant-text').last().textContent()).toBe('Blue it is.')
    const call = page.locator('li.call').first()
    expect(await call.locator('.badge').first().textContent()).toBe('ok')
    await call.locator('summary').first().click()
    expect(await call.locator('.result .content').textContent()).toContain('blue')

    // A run waiting for an approval is cancelled from the page: the prompt goes, the session ends cancelled.
    model.push({ toolCalls: [{ id: 'call_write2', name: 'write', arguments: { path: 'never.txt', content: 'no' } }] })
    await page.getByRole('link', { name: '← All sessions' }).click()
    await page.getByLabel('Prompt').fill('Write never.txt')
    await page.keyboard.press('Control+Enter')
    await page.getByRole('button', { name: 'Allow write this once' }).waitFor({ timeout: 30_000 })
    await page.getByRole('button', { name: 'Cancel run' }).click()
    await page.locator('.entry.session-end').waitFor({ timeout: 30_000 })
    expect(await page.locator('.entry.session-end').textContent()).toBe('Session ended: cancelled')
    expect(await page.getByRole('button', { name: 'Allow write this once' }).count()).toBe(0)
    expect(await page.getByRole('button', { name: 'Cancel run' }).isHidden()).toBe(true)
    expect(existsSync(join(dir, 'never.txt'))).toBe(false)
    expect(errors).toEqual([])
  })

  it('a tab without the token shows the API error and how to pass the token, not a blank page', async () => {
    // Same profile, but a new tab's sessionStorage is empty.
    const page = await context.newPage()
    await page.goto(url)
    const error = page.locator('.error-message')
    await error.waitFor({ timeout: 30_000 })
    expect(await error.textContent()).toMatch(/^UNAUTHORIZED: .*#token=<token>/)
    expect(await page.locator('table.sessions tbody tr').count()).toBe(0)
  })
})

function shot(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true })
  return join(ARTIFACTS, name)
}

function focusedLabel(page: Page): Promise<string | null> {
  return page.evaluate('document.activeElement && document.activeElement.getAttribute("aria-label")') as Promise<string | null>
}
