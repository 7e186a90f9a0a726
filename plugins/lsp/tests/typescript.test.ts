import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as fs from '@cordage/plugin-fs'
import { codeOf, cursor, fixture, groupMembers, languageServers, loadLsp, project, textOf, valueOf } from './helpers.js'

const main = fixture['src/main.ts']!
const math = fixture['src/math.ts']!

describe('lsp against typescript-language-server', { timeout: 180_000 }, () => {
  it('answers definition, references, hover and symbols', async () => {
    const root = await project()
    const { call, fiber } = await loadLsp(root)
    try {
      const definition = await call({ operation: 'definition', path: 'src/main.ts', ...cursor(main, 'add', 2) })
      const at = cursor(math, 'add')
      expect(valueOf(definition)).toMatchObject({ kind: 'locations', resolvedWorkspaceUri: `file://${root}`, truncated: false })
      expect(valueOf(definition).locations).toHaveLength(1)
      expect(textOf(definition)).toBe(`src/math.ts:${at.line}:${at.character}`)

      const references = await call({ operation: 'references', path: 'src/math.ts', ...cursor(math, 'add') })
      const lines = textOf(references).split('\n')
      // The declaration is included, and each file's references are listed together.
      expect(lines).toContain(`src/math.ts:${at.line}:${at.character}`)
      for (const occurrence of [1, 2, 3]) {
        const use = cursor(main, 'add', occurrence)
        expect(lines).toContain(`src/main.ts:${use.line}:${use.character}`)
      }
      const second = cursor(math, 'add', 2)
      expect(lines).toContain(`src/math.ts:${second.line}:${second.character}`)
      expect(lines).toHaveLength(5)
      // Contiguous per file: once the listing moves to another file it never comes back.
      const files = lines.map((line) => line.split(':')[0])
      expect(files.filter((file, index) => index === 0 || file !== files[index - 1])).toEqual([...new Set(files)])

      const hover = await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'double') })
      expect(valueOf(hover).kind).toBe('hover')
      expect(textOf(hover)).toContain('function double(value: number): number')
      expect(textOf(hover)).toContain('Doubles a number.')

      const blank = await call({ operation: 'hover', path: 'src/main.ts', line: 2, character: 1 })
      expect(textOf(blank)).toBe('No hover information.')

      const symbols = await call({ operation: 'symbols', path: 'src/math.ts' })
      expect(textOf(symbols)).toContain(`add (function) src/math.ts:${at.line}:${at.character}`)
      expect(textOf(symbols)).toContain('answer (')
      const found = await call({ operation: 'symbols', path: 'src/math.ts', query: 'double' })
      expect(textOf(found)).toContain('double (function) src/main.ts:4:')
    } finally {
      await fiber.dispose()
    }
  })

  it('answers implementation: the classes and methods that implement an interface and its members', async () => {
    const shapes =
      'export interface Shape {\n  area(): number\n}\nexport class Square implements Shape {\n  area(): number {\n    return 4\n  }\n}\nexport class Circle implements Shape {\n  area(): number {\n    return 3\n  }\n}\n'
    const root = await project({ ...fixture, 'src/shapes.ts': shapes })
    const { call, fiber } = await loadLsp(root)
    try {
      const at = (needle: string, occurrence = 1) => {
        const { line, character } = cursor(shapes, needle, occurrence)
        return `src/shapes.ts:${line}:${character}`
      }
      const classes = await call({ operation: 'implementation', path: 'src/shapes.ts', ...cursor(shapes, 'Shape') })
      expect(valueOf(classes)).toMatchObject({ kind: 'locations', withheld: 0 })
      expect(textOf(classes).split('\n')).toEqual([at('Square'), at('Circle')])
      const methods = await call({ operation: 'implementation', path: 'src/shapes.ts', ...cursor(shapes, 'area') })
      expect(textOf(methods).split('\n')).toEqual([at('area', 2), at('area', 3)])
    } finally {
      await fiber.dispose()
    }
  })

  it('reports diagnostics after an edit made by the edit tool', async () => {
    const root = await project()
    const { ctx, call, fiber } = await loadLsp(root)
    await ctx.plugin(fs, { root })
    try {
      const clean = await call({ operation: 'diagnostics', path: 'src/main.ts' })
      expect(valueOf(clean)).toMatchObject({ kind: 'diagnostics', diagnostics: [], upToDate: true })
      expect(textOf(clean)).toBe('No diagnostics in src/main.ts.')

      expect((await ctx.tools.execute({ name: 'read', arguments: { path: 'src/main.ts' } })).isError).toBe(false)
      const edit = await ctx.tools.execute({
        name: 'edit',
        arguments: { path: 'src/main.ts', old_string: 'add(value, value)', new_string: "add(value, 'twice')" },
      })
      expect(edit.isError).toBe(false)

      const broken = await call({ operation: 'diagnostics', path: 'src/main.ts' })
      const value = valueOf(broken)
      expect(value.upToDate).toBe(true)
      expect(value.diagnostics).toHaveLength(1)
      expect(value.diagnostics[0]).toMatchObject({ severity: 'error', code: '2345', range: { start: { line: 4, character: 20 } } })
      expect(textOf(broken)).toMatch(
        /^src\/main\.ts:5:21: error \[typescript 2345\]: Argument of type 'string' is not assignable to parameter of type 'number'\.$/,
      )

      // math.ts is open on the server too; changing it on disk changes main.ts's diagnostics (main.ts itself is unchanged).
      expect(valueOf(await call({ operation: 'symbols', path: 'src/math.ts' })).symbols.length).toBeGreaterThan(0)
      await ctx.tools.execute({ name: 'read', arguments: { path: 'src/math.ts' } })
      const widen = await ctx.tools.execute({ name: 'edit', arguments: { path: 'src/math.ts', old_string: 'b: number)', new_string: 'b: number, c: number)' } })
      expect(widen.isError).toBe(false)
      const cascaded = await call({ operation: 'diagnostics', path: 'src/main.ts' })
      expect(textOf(cascaded)).toContain('Expected 3 arguments, but got 2.')
    } finally {
      await fiber.dispose()
    }
  })

  it('restarts a server that crashed, and the next call works', async () => {
    const root = await project()
    const { call, fiber } = await loadLsp(root)
    try {
      expect(valueOf(await call({ operation: 'hover', path: 'src/main.ts', ...cursor(main, 'double') })).hover).not.toBeNull()
      const [first] = languageServers()
      expect(first).toBeDefined()
      process.kill(first!, 'SIGKILL')
      await expect.poll(() => languageServers().includes(first!), { timeout: 10_000 }).toBe(false)
      const again = await call({ operation: 'definition', path: 'src/main.ts', ...cursor(main, 'add', 2) })
      expect(textOf(again)).toMatch(/^src\/math\.ts:1:17$/)
      const [second] = languageServers()
      expect(second).toBeDefined()
      expect(second).not.toBe(first)
      // The crashed server's process group (its tsserver) was ended when it was replaced.
      await expect.poll(() => groupMembers(first!), { timeout: 10_000 }).toEqual([])
    } finally {
      await fiber.dispose()
    }
  })

  it('shuts the server and its children down when the plugin unloads', async () => {
    const root = await project()
    const { ctx, call, fiber } = await loadLsp(root)
    expect(valueOf(await call({ operation: 'symbols', path: 'src/math.ts' })).symbols.length).toBeGreaterThan(0)
    const [pid] = languageServers()
    expect(pid).toBeDefined()
    expect(groupMembers(pid!).length).toBeGreaterThan(1)
    await fiber.dispose()
    expect(() => process.kill(pid!, 0)).toThrow()
    // The group's other members (tsserver) were sent SIGKILL; the kernel reaps them a moment later.
    await expect.poll(() => groupMembers(pid!), { timeout: 5000 }).toEqual([])
    expect(ctx.tools.get('lsp')).toBeUndefined()
  })

  it('refuses files without a server, outside the root, missing positions and positions past the end', async () => {
    const root = await project()
    const { call, fiber } = await loadLsp(root)
    try {
      const ruby = await call({ operation: 'definition', path: 'notes.rb', line: 1, character: 1 })
      expect(codeOf(ruby)).toBe('LSP_NO_SERVER')
      expect(textOf(ruby)).toContain('no language server is configured for notes.rb')
      expect(codeOf(await call({ operation: 'hover', path: '../outside.ts', line: 1, character: 1 }))).toMatch(/LSP_NOT_FOUND|LSP_PATH_OUTSIDE_ROOT/)
      expect(codeOf(await call({ operation: 'hover', path: '/etc/hostname', line: 1, character: 1 }))).toBe('LSP_PATH_OUTSIDE_ROOT')
      expect(codeOf(await call({ operation: 'definition', path: 'src/main.ts' }))).toBe('LSP_POSITION_REQUIRED')
      const past = await call({ operation: 'hover', path: 'src/main.ts', line: 99, character: 1 })
      expect(codeOf(past)).toBe('LSP_POSITION_OUT_OF_RANGE')
      expect(textOf(past)).toContain('line 99 is past the end of src/main.ts, which has 9 lines')
      expect(codeOf(await call({ operation: 'hover', path: 'src/main.ts', line: 1, character: 500 }))).toBe('LSP_POSITION_OUT_OF_RANGE')
      expect(codeOf(await call({ operation: 'rename', path: 'src/main.ts' }))).toBe('INVALID_ARGS')
      expect(codeOf(await call({ operation: 'hover', path: 'src/main.ts', line: 0, character: 1 }))).toBe('INVALID_ARGS')
      expect(codeOf(await call({ operation: 'hover', path: 'src/missing.ts', line: 1, character: 1 }))).toBe('LSP_NOT_FOUND')
      // None of these needed a server.
      expect(languageServers()).toEqual([])
    } finally {
      await fiber.dispose()
    }
  })

  it('reports a server that cannot start with the command named', async () => {
    const root = await project()
    const { call, fiber } = await loadLsp(root, {
      servers: [{ name: 'ghost', command: join(root, 'no-such-server'), args: [], globs: ['**/*.ts'], languageId: 'typescript', env: {} }],
    })
    const result = await call({ operation: 'symbols', path: 'src/math.ts' })
    expect(codeOf(result)).toBe('LSP_START_FAILED')
    expect(textOf(result)).toContain('could not start the ghost language server')
    await fiber.dispose()
  })
})
