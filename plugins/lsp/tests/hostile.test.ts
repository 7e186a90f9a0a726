import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as Policy from '@cordage/plugin-policy'
import { codeOf, cursor, fakeServer, fixture, loadLsp, project, textOf, valueOf } from './helpers.js'

// A project whose src/secret.ts is denied by a path rule, and an allowed file that uses what it declares.
const secret =
  "export const secret = 'hunter2-PASSWORD' as const\nexport const config = { apiKey: 'sk-live-123456' } as const\nexport function leak(): string {\n  return secret\n}\n"
const main =
  "import { secret, config } from './secret.js'\nimport { add } from './math.js'\n\nexport const shown = secret.length\nexport const key = config.apiKey\nexport const sum = add(1, 2)\nexport const settings = config\n"
const shapes = 'export interface Shape {\n  area(): number\n}\nexport class Square implements Shape {\n  area(): number {\n    return 4\n  }\n}\n'
const files = {
  ...fixture,
  'src/secret.ts': `${secret}import type { Shape } from './shapes.js'\nexport class Vault implements Shape {\n  area(): number {\n    return 1\n  }\n}\n`,
  'src/main.ts': main,
  'src/shapes.ts': shapes,
}
const LEAKS = /hunter2|sk-live|secret\.ts/

async function withPolicy(root: string) {
  const loaded = await loadLsp(root)
  await loaded.ctx.plugin(Policy, { root, rules: [{ path: 'src/secret.ts', action: 'deny', reason: 'src/secret.ts is off limits' }] })
  return loaded
}

describe('lsp results honour path rules', { timeout: 180_000 }, () => {
  it('withholds hovers that quote a denied file and locations and symbols in it, and says how many', async () => {
    const root = await project(files)
    const open = await loadLsp(root)
    const { call, fiber } = await withPolicy(root)
    try {
      // Without a policy the language server quotes the denied file's values.
      expect(textOf(await open.call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'secret', 3) }))).toContain('hunter2-PASSWORD')
      await open.fiber.dispose()

      expect(codeOf(await call({ operation: 'symbols', path: 'src/secret.ts' }))).toBe('DENIED')
      const hover = await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'secret', 3) })
      expect(valueOf(hover)).toEqual({ kind: 'hover', hover: null, withheld: 1 })
      expect(textOf(hover)).toBe('Hover withheld: the symbol is declared in a file the path rules do not let this call read.')
      const property = await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'apiKey') })
      expect(valueOf(property)).toEqual({ kind: 'hover', hover: null, withheld: 1 })
      // Declared here, but its type is the object literal declared in secret.ts (found by type definition).
      const typed = await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'settings') })
      expect(valueOf(typed)).toEqual({ kind: 'hover', hover: null, withheld: 1 })

      const definition = await call({ operation: 'definition', path: 'src/main.ts', ...cursor(main, 'secret', 3) })
      expect(valueOf(definition)).toMatchObject({ kind: 'locations', locations: [], withheld: 1 })
      expect(textOf(definition)).toBe('No results.\n(1 location withheld: in files the path rules do not let this call read.)')

      const references = await call({ operation: 'references', path: 'src/main.ts', ...cursor(main, 'secret', 3) })
      const lines = textOf(references).split('\n')
      // Declaration and the use in leak() are in secret.ts; the import and the use are in main.ts.
      expect(lines).toEqual([
        `src/main.ts:${cursor(main, 'secret').line}:${cursor(main, 'secret').character}`,
        `src/main.ts:${cursor(main, 'secret', 3).line}:${cursor(main, 'secret', 3).character}`,
        '(2 locations withheld: in files the path rules do not let this call read.)',
      ])

      // Vault, in secret.ts, implements Shape too.
      const implementations = await call({ operation: 'implementation', path: 'src/shapes.ts', ...cursor(shapes, 'area') })
      expect(valueOf(implementations)).toMatchObject({ withheld: 1 })
      expect(textOf(implementations).split('\n')[0]).toBe(`src/shapes.ts:${cursor(shapes, 'area', 2).line}:${cursor(shapes, 'area', 2).character}`)

      const symbols = await call({ operation: 'symbols', path: 'src/main.ts', query: 'leak' })
      expect(valueOf(symbols)).toMatchObject({ kind: 'symbols', symbols: [], withheld: 1 })

      for (const result of [hover, property, typed, definition, references, implementations, symbols]) expect(JSON.stringify(result)).not.toMatch(LEAKS)

      // What lies in allowed files is untouched.
      const allowed = await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'add', 2) })
      expect(valueOf(allowed)).toMatchObject({ withheld: 0 })
      expect(textOf(allowed)).toContain('add(a: number, b: number): number')
      const elsewhere = await call({ operation: 'definition', path: 'src/main.ts', ...cursor(main, 'add', 2) })
      expect(textOf(elsewhere)).toBe('src/math.ts:1:17')
    } finally {
      await fiber.dispose()
    }
  })
})

describe('lsp and hostile files', () => {
  const server = fakeServer('symbols')

  it('does not hang when an open document is replaced by a FIFO: it is closed on the server and the call answers', { timeout: 30_000 }, async () => {
    const root = await project({ 'a.txt': 'one\n', 'b.txt': 'two\n' })
    const { call, fiber } = await loadLsp(root, { servers: [server] })
    try {
      expect(valueOf(await call({ operation: 'symbols', path: 'a.txt' })).symbols).toHaveLength(150)
      rmSync(join(root, 'a.txt'))
      execFileSync('mkfifo', [join(root, 'a.txt')])
      expect(valueOf(await call({ operation: 'symbols', path: 'b.txt' })).symbols).toHaveLength(150)
      const fifo = await call({ operation: 'symbols', path: 'a.txt' })
      expect(codeOf(fifo)).toBe('LSP_NOT_FOUND')
      expect(textOf(fifo)).toBe('Error: a.txt is not a regular file')
    } finally {
      await fiber.dispose()
    }
  })
})
