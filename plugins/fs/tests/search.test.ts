import { spawnSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { listenerCount } from '@cordage/registry'
import { createTestContext } from '@cordage/testing'
import { Spill } from '@cordage/plugin-spill'
import * as fs from '../src/index.js'
import { TestSpill, codeOf, loadFs, tempDir, textOf, valueOf, writeTree } from './helpers.js'

const FILES = 20_000
let root: string
let spillDir: string

/** 40 packages × 10 modules × 50 files, plus ignored, hidden and nested-ignored files that must never appear. */
async function generateTree(dir: string): Promise<void> {
  let index = 0
  for (let pkg = 0; pkg < 40; pkg++) {
    for (let mod = 0; mod < 10; mod++) {
      const folder = join(dir, `pkg${pkg}`, 'src', `mod${mod}`)
      await mkdir(folder, { recursive: true })
      const writes: Promise<void>[] = []
      for (let file = 0; file < 50; file++, index++) {
        const word = index % 5 === 0 ? 'needle' : index % 7 === 0 ? 'NEEDLE' : 'hay'
        const ext = file % 10 === 0 ? 'md' : 'ts'
        writes.push(writeFile(join(folder, `file${file}.${ext}`), `export const v = ${index}\n// ${word} ${index}\nexport default v\n`))
      }
      await Promise.all(writes)
    }
  }
  await writeFile(join(dir, '.gitignore'), '# build output\nbuild/\n*.log\n')
  await mkdir(join(dir, 'build'))
  await writeFile(join(dir, 'build', 'out.ts'), '// needle in build\n')
  await writeFile(join(dir, 'pkg0', 'debug.log'), 'needle in a log\n')
  await mkdir(join(dir, '.cache'))
  await writeFile(join(dir, '.cache', 'hidden.ts'), '// needle hidden\n')
  await writeFile(join(dir, 'pkg1', '.gitignore'), 'generated/\n')
  await mkdir(join(dir, 'pkg1', 'generated'))
  await writeFile(join(dir, 'pkg1', 'generated', 'gen.ts'), '// needle generated\n')
}

beforeAll(async () => {
  root = await tempDir()
  spillDir = await tempDir('cordage-spill-')
  await generateTree(root)
}, 120_000)

async function withSpill(config: Partial<fs.Config> = {}, spillFirst = true) {
  const ctx = await createTestContext()
  if (spillFirst) await ctx.plugin(TestSpill, { dir: spillDir })
  const fiber = await ctx.plugin(fs, { root, maxResults: 50_000, ...config })
  if (!spillFirst) await ctx.plugin(TestSpill, { dir: spillDir })
  const spill = ctx.get('spill') as unknown as TestSpill
  return { ctx, fiber, spill, call: (name: string, args: unknown, parent?: symbol) => ctx.tools.execute({ name, arguments: args, ...(parent && { parent }) }) }
}

describe('glob and grep on a 20 000-file tree', () => {
  it(
    'glob lists every file, honours .gitignore (root and nested) and hidden files, identically with ripgrep and the JS fallback',
    { timeout: 120_000 },
    async () => {
      const rg = valueOf(await (await loadFs(root, { search: 'ripgrep', maxResults: 50_000 })).call('glob', { pattern: '**/*' }))
      const node = valueOf(await (await loadFs(root, { search: 'node', maxResults: 50_000 })).call('glob', { pattern: '**/*' }))
      expect(rg.paths.length).toBe(FILES)
      expect(rg.truncated).toBe(false)
      expect(node).toEqual(rg)
      expect(rg.paths.some((path: string) => /build|\.log$|\.cache|generated/.test(path))).toBe(false)
      for (const pattern of ['*.md', 'pkg3/src/mod1/*.ts', 'pkg3/**/file4?.ts', '{pkg1,pkg2}/src/mod9/file1.*']) {
        const [a, b] = await Promise.all(
          ['ripgrep', 'node'].map(async (search) => valueOf(await (await loadFs(root, { search: search as 'node' })).call('glob', { pattern }))),
        )
        expect(a.paths.length, pattern).toBeGreaterThan(0)
        expect(b, pattern).toEqual(a)
      }
    },
  )

  it('grep returns identical values from ripgrep and the JS fallback, with and without context, case and glob', { timeout: 120_000 }, async () => {
    const engines = await Promise.all(['ripgrep', 'node'].map((search) => loadFs(root, { search: search as 'node', maxResults: 50_000 })))
    const cases = [
      { pattern: 'needle' },
      { pattern: 'needle \\d+0$', case_insensitive: true },
      { pattern: 'needle', glob: '*.md', context: 1 },
      { pattern: 'hay 1212\\d', context: 2, path: 'pkg24' },
    ]
    for (const args of cases) {
      const [rg, node] = await Promise.all(engines.map(async ({ call }) => valueOf(await call('grep', args))))
      expect(rg.matches.length, JSON.stringify(args)).toBeGreaterThan(0)
      expect(node, JSON.stringify(args)).toEqual(rg)
    }
    const all = valueOf(await engines[0]!.call('grep', { pattern: 'needle' }))
    expect(all.matches.length).toBe(FILES / 5)
    expect(all.matches.some((match: any) => /build|\.log$|\.cache|generated/.test(match.path))).toBe(false)
  })

  it('renders the first page of glob and spills the full list through ctx.spill', async () => {
    const { call, spill } = await withSpill()
    const result = await call('glob', { pattern: '**/*.ts' })
    const paths = valueOf(result).paths
    expect(paths.length).toBe(18_000)
    const text = textOf(result)
    const lines = text.split('\n')
    expect(lines.slice(0, 100)).toEqual(paths.slice(0, 100))
    const saved = spill.saved.at(-1)!
    expect(saved.toolName).toBe('glob')
    expect(lines.slice(100).join('\n')).toBe(`\n(Showing 100 of 18000 paths. Full list: ${saved.path} (read it with read offset/limit or grep).)`)
    expect(await readFile(saved.path, 'utf8')).toBe(paths.join('\n') + '\n')
  })

  it('renders grep matches as path:line:text with context and spills the full list', async () => {
    const { call, spill } = await withSpill({}, false)
    const result = await call('grep', { pattern: 'needle|NEEDLE', path: 'pkg7', context: 1 })
    const value = valueOf(result)
    expect(value.matches[0]).toEqual({
      path: 'pkg7/src/mod0/file0.md',
      lineNumber: 2,
      line: '// needle 3500',
      before: [{ lineNumber: 1, line: 'export const v = 3500' }],
      after: [{ lineNumber: 3, line: 'export default v' }],
    })
    expect(textOf(result).split('\n').slice(0, 8).join('\n')).toMatchInlineSnapshot(`
      "pkg7/src/mod0/file0.md-1-export const v = 3500
      pkg7/src/mod0/file0.md:2:// needle 3500
      pkg7/src/mod0/file0.md-3-export default v
      --
      pkg7/src/mod0/file10.md-1-export const v = 3510
      pkg7/src/mod0/file10.md:2:// needle 3510
      pkg7/src/mod0/file10.md-3-export default v
      --"
    `)
    const saved = spill.saved.at(-1)!
    expect(saved.toolName).toBe('grep')
    expect((await readFile(saved.path, 'utf8')).split('\n').filter((line) => /:2:\/\/ (needle|NEEDLE)/.test(line)).length).toBe(value.matches.length)
    expect(textOf(result)).toContain(`Showing 100 of ${value.matches.length} matches. Full list: ${saved.path}`)
  })

  it('pages before the generic spill bounds, whichever plugin loads first (the real spill plugin)', async () => {
    const texts: string[] = []
    for (const spillFirst of [true, false]) {
      const ctx = await createTestContext()
      const dir = join(spillDir, spillFirst ? 'first' : 'last')
      if (spillFirst) await ctx.plugin(Spill, { dir, deleteOnDispose: true })
      await ctx.plugin(fs, { root, maxResults: 50_000 })
      if (!spillFirst) await ctx.plugin(Spill, { dir, deleteOnDispose: true })
      const result = await ctx.tools.execute({ name: 'grep', arguments: { pattern: 'needle' } })
      const text = textOf(result)
      const path = /Full list: (\S+) \(read it/.exec(text)?.[1]
      expect(path, text.slice(-300)).toBeDefined()
      expect(path!.startsWith(dir)).toBe(true)
      expect((await readFile(path!, 'utf8')).split('\n').filter(Boolean)).toHaveLength(FILES / 5)
      texts.push(text.replace(path!, '<spilled>'))
    }
    expect(texts[1]).toBe(texts[0])
    expect(texts[0]).toContain('(Showing 100 of 4000 matches. Full list: <spilled> (read it with read offset/limit or grep).)')
  })

  it('does not spill nested calls or short lists, and says how to narrow when no spill service is loaded', async () => {
    const { call, spill } = await withSpill()
    const nested = await call('glob', { pattern: '**/*.md' }, Symbol('run_code'))
    expect(spill.saved).toHaveLength(0)
    expect(textOf(nested)).toContain('(Showing 100 of 2000 paths. Narrow the pattern or path to see the rest.)')
    const short = await call('grep', { pattern: 'needle 3500$' })
    expect(spill.saved).toHaveLength(0)
    expect(textOf(short)).toMatchInlineSnapshot(`
      "pkg7/src/mod0/file0.md:2:// needle 3500

      (1 match in 1 file.)"
    `)
    const { call: bare } = await loadFs(root)
    expect(textOf(await bare('glob', { pattern: '*.md' }))).toContain('(Showing 100 of 2000 paths. Narrow the pattern or path to see the rest.)')
  })

  it.each(['ripgrep', 'node'] as const)('caps acquisition at maxResults and reports it (%s)', async (search) => {
    const { call } = await withSpill({ search, maxResults: 500 })
    const glob = await call('glob', { pattern: '**/*.ts' })
    expect(valueOf(glob).paths).toHaveLength(500)
    expect(valueOf(glob).truncated).toBe(true)
    expect(textOf(glob)).toContain('Stopped at the limit of 500 paths; there are more. Narrow the pattern or path.')
    const grep = valueOf(await call('grep', { pattern: 'export' }))
    expect(grep.matches).toHaveLength(500)
    expect(grep.truncated).toBe(true)
  })

  it('reports invalid patterns and missing search paths with codes', async () => {
    for (const search of ['ripgrep', 'node'] as const) {
      const { call } = await loadFs(root, { search })
      expect(codeOf(await call('grep', { pattern: 'a(b' }))).toBe('INVALID_PATTERN')
      expect(codeOf(await call('grep', { pattern: 'x', path: 'nope' }))).toBe('NOT_FOUND')
      expect(codeOf(await call('glob', { pattern: '*', path: 'pkg0/src/mod0/file0.md' }))).toBe('NOT_A_DIRECTORY')
    }
  })

  it('agrees across engines on CRLF, binary, unicode, long lines and overlapping context', async () => {
    const dir = await tempDir()
    await writeTree(dir, {
      'dos.txt': 'alpha\r\nneedle one\r\nbeta\r\nneedle two\r\n',
      'blob.bin': Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2]), Buffer.from('needle\n')]),
      'uni.md': 'café needle ☕\nno\nneedle again\n',
      'long.js': `${'x'.repeat(3000)}needle\n`,
      'wide.txt': `${'€'.repeat(150)}needle\r\n`,
      'sub/deep/a.txt': 'needle\nneedle\nx\ny\nz\nneedle\n',
      // A newline in a file name: ripgrep's plain output is parsed by its NUL after the path.
      'odd\nname.txt': 'before\nneedle\n',
    })
    const [rg, node] = await Promise.all(
      ['ripgrep', 'node'].map(async (search) => {
        const { call } = await loadFs(dir, { search: search as 'node', maxLineLength: 100 })
        return valueOf(await call('grep', { pattern: 'needle', context: 2 }))
      }),
    )
    expect(node).toEqual(rg)
    expect(rg.matches.map((match: any) => `${match.path}:${match.lineNumber}`)).toEqual([
      'dos.txt:2',
      'dos.txt:4',
      'long.js:1',
      'odd\nname.txt:2',
      'sub/deep/a.txt:1',
      'sub/deep/a.txt:2',
      'sub/deep/a.txt:6',
      'uni.md:1',
      'uni.md:3',
      'wide.txt:1',
    ])
    expect(rg.matches[0].line).toBe('needle one')
    // A clipped line states its length in bytes, as read does (a megabyte line is never decoded whole to count it).
    expect(rg.matches[2].line).toMatch(/^x{100} … \[line truncated: 3006 bytes in total\]$/)
    expect(rg.matches.at(-1).line).toBe(`${'€'.repeat(100)} … [line truncated: 456 bytes in total]`)
  })

  it('greps a single file by path', async () => {
    const { call } = await loadFs(root)
    expect(valueOf(await call('grep', { pattern: 'v', path: 'pkg0/src/mod0/file1.ts' })).matches).toEqual([
      { path: 'pkg0/src/mod0/file1.ts', lineNumber: 1, line: 'export const v = 1' },
      { path: 'pkg0/src/mod0/file1.ts', lineNumber: 3, line: 'export default v' },
    ])
  })

  it('cancels a running search when the call is aborted', async () => {
    const { ctx } = await withSpill()
    const controller = new AbortController()
    const pending = ctx.tools.execute({ name: 'grep', arguments: { pattern: '.' }, signal: controller.signal })
    setTimeout(() => controller.abort(), 5)
    const result = await pending
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
  })

  it('unloading stops running searches and kills their ripgrep processes', async () => {
    const { ctx, fiber } = await withSpill()
    const pending = ctx.tools.execute({ name: 'grep', arguments: { pattern: '(a|b|c)+x?y?z?' } })
    const children = () =>
      spawnSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter((line) => /\brg\b/.test(line))
    while (children().length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await fiber.dispose()
    const result = await pending
    expect(result.isError && result.error.message).toMatch(/unloaded/)
    expect(children()).toEqual([])
  })

  it('unloading removes its tools and its presentation listener', async () => {
    const { ctx, fiber } = await withSpill()
    const hooks = () => listenerCount(ctx, 'tools/present')
    const loaded = hooks()
    expect(loaded).toBeGreaterThan(0)
    await fiber.dispose()
    expect(hooks()).toBe(loaded - 1)
    for (const name of ['read', 'write', 'edit', 'glob', 'grep']) expect(ctx.tools.get(name)).toBeUndefined()
  })
})
