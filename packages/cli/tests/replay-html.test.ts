import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { cordage, project } from './helpers.js'

const CHROMIUM = process.env.CORDAGE_CHROMIUM ?? '/usr/bin/chromium'
const HOSTILE = '</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'

const cassette = {
  version: 1,
  model: 'test',
  turns: [
    {
      text: `Writing the file. ${HOSTILE}`,
      toolCalls: [
        { id: 'call_w', name: 'write', arguments: JSON.stringify({ path: 'notes.txt', content: 'alpha\nbeta\n' }) },
        { id: 'call_e', name: 'edit', arguments: JSON.stringify({ path: 'notes.txt', old_string: 'beta', new_string: `gamma ${HOSTILE}` }) },
      ],
    },
    { text: 'Done.', usage: { inputTokens: 1200, outputTokens: 30 } },
  ],
}

describe('cordage replay --html', { timeout: 120_000 }, () => {
  const dir = project({ 'tape.json': JSON.stringify(cassette) })
  let id: string

  beforeAll(async () => {
    const run = await cordage(['run', '--cassette', 'tape.json', 'write the notes'], { cwd: dir })
    if (run.code !== 0) throw new Error(`cordage run failed: ${run.stderr}`)
    id = readdirSync(join(dir, '.cordage', 'sessions'))[0]!.replace(/\.jsonl$/, '')
    // A child run of the edit call, as a subagent writes it: found through the store and nested there.
    const header = {
      type: 'session',
      version: 1,
      id: `${id}-child`,
      createdAt: new Date().toISOString(),
      cwd: dir,
      parent: { session: id, callId: 'call_e', tool: 'subagent' },
      depth: 1,
    }
    const events = [
      { type: 'user/message', seq: 1, time: header.createdAt, data: { content: 'check it' } },
      { type: 'assistant/message', seq: 2, time: header.createdAt, data: { content: 'Checked by the child.' } },
      { type: 'session/end', seq: 3, time: header.createdAt, data: { reason: 'completed' } },
    ]
    writeFileSync(join(dir, '.cordage', 'sessions', `${header.id}.jsonl`), [header, ...events].map((line) => JSON.stringify(line)).join('\n') + '\n')
  })

  it('writes <session>.html in the working directory and prints its path', async () => {
    const result = await cordage(['replay', '--html', id], { cwd: dir })
    expect(result.code, result.stderr).toBe(0)
    const file = join(dir, `${id}.html`)
    expect(result.stdout.trim()).toBe(file)
    const html = readFileSync(file, 'utf8')
    expect(html).toContain(`<title>Cordage session ${id}</title>`)
    expect(html).not.toMatch(/https?:\/\//)
    expect(html.match(/<\/script>/g)).toHaveLength(4)
    expect(html).toContain('Checked by the child.')
  })

  it('--out names the file; a .jsonl path works as the session', async () => {
    mkdirSync(join(dir, 'share'), { recursive: true })
    const result = await cordage(['replay', '--html', `.cordage/sessions/${id}.jsonl`, '--out', 'share/run.html'], { cwd: dir })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe(join(dir, 'share', 'run.html'))
    expect(readdirSync(join(dir, 'share'))).toEqual(['run.html'])
  })

  it.each([
    [['replay', '--html', 'no-such-session'], 1, 'no-such-session'],
    [['replay', '--html', '../etc/passwd'], 1, ''],
    [['replay', '--out', 'x.html', 'some-id'], 2, '--out is an option of --html'],
    [['replay', '--html', '--json', 'some-id'], 2, 'choose one of --json and --html'],
  ])('%j fails with exit %i and a message, writing nothing', async (args, code, message) => {
    const before = readdirSync(dir).sort()
    const result = await cordage(args, { cwd: dir })
    expect(result.code).toBe(code)
    expect(result.stderr).toContain(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(readdirSync(dir).sort()).toEqual(before)
  })

  it('an --out in a missing directory is WRITE_FAILED, not a crash', async () => {
    const result = await cordage(['replay', '--html', id, '--out', 'missing/dir/run.html'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('cannot write')
    expect(existsSync(join(dir, 'missing'))).toBe(false)
  })

  it.skipIf(!existsSync(CHROMIUM))(
    'opens from disk in Chromium with the network off: the diff of the real edit, the child run, no script from the output',
    async () => {
      const file = join(dir, `${id}.html`)
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
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
      try {
        const context = await browser.newContext({ offline: true })
        const requested: string[] = []
        await context.route('**/*', (route) => {
          const url = route.request().url()
          if (url.startsWith('file:') || url.startsWith('data:')) return route.continue()
          requested.push(url)
          return route.abort()
        })
        const page = await context.newPage()
        await page.goto(pathToFileURL(file).href)
        await page.waitForSelector('html[data-rendered="true"]', { timeout: 30_000 })
        expect(await page.locator('.assistant-text').first().textContent()).toBe(`Writing the file. ${HOSTILE}`)
        const edit = page.locator('li.call').nth(1)
        await edit.locator('summary').first().click()
        expect(await edit.locator('.diff figcaption .path').textContent()).toBe('notes.txt')
        expect(await edit.locator('.diff-lines .line.add').textContent()).toBe(`+gamma ${HOSTILE}\n`)
        await edit.locator('details.child > summary').click()
        await page.getByText('Checked by the child.').waitFor({ timeout: 10_000 })
        expect(await page.evaluate('window.__pwned')).toBeUndefined()
        expect(requested).toEqual([])
      } finally {
        await browser.close()
      }
    },
  )

  it.skipIf(!process.env.CORDAGE_TEST_POSTGRES_URL)('reads the session from PostgreSQL when cordage.yml names that store', async () => {
    const pg = project({ 'tape.json': JSON.stringify(cassette), 'cordage.yml': `store: { postgres: "${process.env.CORDAGE_TEST_POSTGRES_URL}" }\n` })
    const run = await cordage(['run', '--json', '--cassette', 'tape.json', 'write the notes'], { cwd: pg })
    expect(run.code, run.stderr).toBe(0)
    const session = (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { session: string }).session
    expect(existsSync(join(pg, '.cordage', 'sessions', `${session}.jsonl`))).toBe(false)
    const result = await cordage(['replay', '--html', session, '--out', 'pg.html'], { cwd: pg })
    expect(result.code, result.stderr).toBe(0)
    const html = readFileSync(join(pg, 'pg.html'), 'utf8')
    expect(html).toContain(`<title>Cordage session ${session}</title>`)
    expect(html).toContain('Writing the file.')
  })
})
