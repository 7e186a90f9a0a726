// HTML → Markdown on pages shaped like the web's: a documentation page, a blog post, a rendered README,
// a page of tables and a code tutorial (tests/corpus/<name>.html), each fetched over loopback and
// compared with the Markdown a reader expects (tests/corpus/<name>.md).
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { loadWeb, serve, valueOf } from './helpers.js'

const corpus = new URL('./corpus/', import.meta.url)
const page = (name: string) => readFile(new URL(`${name}.html`, corpus))

async function fetchCorpus(name: string, config = {}) {
  const body = await page(name)
  const server = await serve((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body))
  const { call } = await loadWeb(config)
  return valueOf(await call('web_fetch', { url: `${server.url}/${name}/page` }))
}

describe('web_fetch Markdown', () => {
  it.each([
    ['docs', 'Retries & timeouts – Fetchkit docs'],
    ['blog', 'Why we moved our queue to Postgres | The Ops Blog'],
    ['readme', 'GitHub - tinyorg/quickcsv: Fast CSV parsing for Node.js'],
    ['tables', 'Rail fares 2026'],
    ['code', 'Python args and kwargs, explained'],
  ])('converts the %s page to the expected Markdown', async (name, title) => {
    const value = await fetchCorpus(name)
    const expected = (await readFile(new URL(`${name}.md`, corpus), 'utf8')).trimEnd()
    // The expected files were written against https://example.com/<name>/page.
    expect(value.content.replaceAll(/http:\/\/127\.0\.0\.2:\d+/g, 'https://example.com')).toBe(expected)
    expect(value.title).toBe(title)
  })

  it('keeps table rows as a GFM table, pipes in cells escaped', async () => {
    const { content } = await fetchCorpus('tables')
    expect(content).toContain('| Route | 2nd class | 1st class | Notes |\n| --- | --- | --- | --- |\n| Lyon – Paris | 79.00 | 119.00 | TGV only |')
    expect(content).toContain('| Paris – Lille | 39.00 | 58.00 | Off-peak \\| peak prices differ |')
  })

  it('keeps the language of code blocks, whichever way the page names it', async () => {
    const { content } = await fetchCorpus('code')
    for (const fence of ['```python\ndef log(', '```python\ndef wrapper(', '```js\nconst f = ', '````markdown\n```python']) expect(content).toContain(fence)
    expect((await fetchCorpus('docs')).content).toContain("```ts\nimport { fetchkit } from 'fetchkit'")
    expect((await fetchCorpus('readme')).content).toContain('```shell\nnpm install quickcsv\n```')
  })

  it("writes the page's <h1> as # and keeps the levels below it", async () => {
    const { content } = await fetchCorpus('docs')
    expect(content.startsWith('# Retries & timeouts\n')).toBe(true)
    expect(content).toContain('\n## Options\n')
    expect(content).toContain('\n### What counts as a timeout\n')
  })

  it('escapes only what Markdown would misread', async () => {
    const docs = (await fetchCorpus('docs')).content
    expect(docs).toContain('status >=500 means the server may succeed')
    const code = (await fetchCorpus('code')).content
    expect(code).toContain('Use snake_case names such as `max_retries`')
    expect(code).toContain('\n\\# is a comment in Python')
    expect(code).toContain('\n1\\. This line starts with a number')
  })
})
