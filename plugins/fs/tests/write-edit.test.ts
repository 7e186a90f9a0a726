import { spawn } from 'node:child_process'
import { chmod, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, loadFs, tempDir, textOf, valueOf } from './helpers.js'

describe('write', () => {
  it('creates a file with its parents, returns before null, and derives a diff in meta', async () => {
    const root = await tempDir()
    const { call } = await loadFs(root)
    const result = await call('write', { path: 'src/new.ts', content: 'export const a = 1\n' })
    expect(valueOf(result)).toEqual({ path: 'src/new.ts', operation: 'create', before: null, after: 'export const a = 1\n' })
    expect(await readFile(join(root, 'src/new.ts'), 'utf8')).toBe('export const a = 1\n')
    expect(textOf(result)).toMatchInlineSnapshot(`"Created src/new.ts (1 line, 19 bytes)."`)
    expect(result.meta).toMatchInlineSnapshot(`
      {
        "additions": 1,
        "deletions": 0,
        "diff": "--- /dev/null
      +++ b/src/new.ts
      @@ -0,0 +1,1 @@
      +export const a = 1
      ",
        "kind": "diff",
        "operation": "create",
        "path": "src/new.ts",
      }
    `)
  })

  it('updates a file that was read, and refuses one never read or changed on disk since', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'a.txt'), 'one\n')
    const { call } = await loadFs(root)
    const unread = await call('write', { path: 'a.txt', content: 'two\n' })
    expect(codeOf(unread)).toBe('NOT_READ')
    expect(textOf(unread)).toMatchInlineSnapshot(`"Error: a.txt already exists and has not been read in this session; read it first, then write or edit it"`)
    valueOf(await call('read', { path: 'a.txt' }))
    const updated = valueOf(await call('write', { path: 'a.txt', content: 'two\n' }))
    expect(updated).toEqual({ path: 'a.txt', operation: 'update', before: 'one\n', after: 'two\n' })
    // Our own write counts as seen: a second write needs no new read.
    valueOf(await call('write', { path: 'a.txt', content: 'three\n' }))
    // Someone else changes the file (same size, different content and mtime).
    await writeFile(join(root, 'a.txt'), 'FOUR!\n')
    const stale = await call('write', { path: 'a.txt', content: 'five\n' })
    expect(codeOf(stale)).toBe('STALE_FILE')
    expect(textOf(stale)).toMatchInlineSnapshot(
      `"Error: a.txt changed on disk since it was last read (by another program or person); read it again, then redo the change"`,
    )
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('FOUR!\n')
    valueOf(await call('read', { path: 'a.txt' }))
    valueOf(await call('write', { path: 'a.txt', content: 'five\n' }))
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('five\n')
  })

  it('detects a same-size change even when the mtime is restored', async () => {
    const root = await tempDir()
    const path = join(root, 'a.txt')
    await writeFile(path, 'aaaa\n')
    const { call } = await loadFs(root)
    valueOf(await call('read', { path: 'a.txt' }))
    const { atime, mtime } = await stat(path)
    // Replacing the file (new inode) is a change even with the old size and timestamps.
    await writeFile(`${path}.new`, 'bbbb\n')
    await utimes(`${path}.new`, atime, mtime)
    await import('node:fs/promises').then(({ rename }) => rename(`${path}.new`, path))
    expect(codeOf(await call('write', { path: 'a.txt', content: 'c\n' }))).toBe('STALE_FILE')
  })

  it('may overwrite an unread file when requireReadBeforeWrite is off', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'a.txt'), 'one\n')
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    expect(valueOf(await call('write', { path: 'a.txt', content: 'two\n' })).before).toBe('one\n')
  })

  it('keeps the file mode and CRLF line endings of an existing file', async () => {
    const root = await tempDir()
    const path = join(root, 'run.sh')
    await writeFile(path, '#!/bin/sh\r\necho hi\r\n')
    await chmod(path, 0o751)
    const { call } = await loadFs(root)
    valueOf(await call('read', { path: 'run.sh' }))
    const value = valueOf(await call('write', { path: 'run.sh', content: '#!/bin/sh\necho bye\n' }))
    expect(value.after).toBe('#!/bin/sh\r\necho bye\r\n')
    expect(await readFile(path, 'utf8')).toBe('#!/bin/sh\r\necho bye\r\n')
    expect((await stat(path)).mode & 0o7777).toBe(0o751)
  })

  it('leaves the old file intact when the writing process is killed mid-write', { timeout: 120_000 }, async () => {
    const root = await tempDir()
    const path = join(root, 'precious.txt')
    await writeFile(path, 'the original content\n')
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=cordage-source', 'tests/fixtures/write-child.ts', root, 'precious.txt', String(300_000_000)],
      {
        cwd: join(import.meta.dirname, '..'),
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    let output = ''
    child.stdout.on('data', (chunk) => void (output += chunk))
    // Kill as soon as the temporary file has received some bytes.
    let temp: string | undefined
    while (!temp) {
      if (child.exitCode !== null) throw new Error(`the child exited early: ${output}`)
      for (const name of await readdir(root)) {
        if (name.endsWith('.tmp') && (await stat(join(root, name)).catch(() => undefined))?.size) temp = name
      }
      if (!temp) await new Promise((resolve) => setTimeout(resolve, 2))
    }
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(output).toBe('writing\n')
    expect(await readFile(path, 'utf8')).toBe('the original content\n')
    // The partial temporary file proves the kill landed mid-write; the target never saw it.
    expect((await stat(join(root, temp))).size).toBeLessThan(300_000_000)
    expect(temp).toMatch(/^\.precious\.txt\.[0-9a-f]{12}\.tmp$/)
  })
})

describe('edit', () => {
  it('replaces one exact match and renders a short confirmation with a diff in meta', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'a.ts'), 'const a = 1\nconst b = 2\nconst c = 3\n')
    const { call } = await loadFs(root)
    expect(codeOf(await call('edit', { path: 'a.ts', old_string: 'b = 2', new_string: 'b = 20' }))).toBe('NOT_READ')
    valueOf(await call('read', { path: 'a.ts' }))
    const result = await call('edit', { path: 'a.ts', old_string: 'b = 2', new_string: 'b = 20' })
    expect(valueOf(result)).toEqual({
      path: 'a.ts',
      before: 'const a = 1\nconst b = 2\nconst c = 3\n',
      after: 'const a = 1\nconst b = 20\nconst c = 3\n',
      replacements: 1,
    })
    expect(textOf(result)).toMatchInlineSnapshot(`"Edited a.ts (1 replacement)."`)
    expect(result.meta).toMatchInlineSnapshot(`
      {
        "additions": 1,
        "deletions": 1,
        "diff": "--- a/a.ts
      +++ b/a.ts
      @@ -1,3 +1,3 @@
       const a = 1
      -const b = 2
      +const b = 20
       const c = 3
      ",
        "kind": "diff",
        "operation": "update",
        "path": "a.ts",
      }
    `)
  })

  it('reports zero and several matches with counts and line numbers; replace_all replaces all', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'a.txt'), 'x = 1\ny = 2\nx = 1\n\nx = 1\n')
    const { call } = await loadFs(root)
    valueOf(await call('read', { path: 'a.txt' }))
    const none = await call('edit', { path: 'a.txt', old_string: 'z = 9', new_string: 'z' })
    expect(codeOf(none)).toBe('NO_MATCH')
    expect(textOf(none)).toMatchInlineSnapshot(
      `"Error: old_string was not found in a.txt; read the file again and copy the exact text, including whitespace and indentation"`,
    )
    const many = await call('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2' })
    expect(codeOf(many)).toBe('AMBIGUOUS_MATCH')
    expect(textOf(many)).toMatchInlineSnapshot(
      `"Error: old_string matches 3 times in a.txt (lines 1, 3, 5); include more surrounding text to make it unique, or set replace_all: true"`,
    )
    expect(codeOf(await call('edit', { path: 'a.txt', old_string: 'y = 2', new_string: 'y = 2' }))).toBe('NO_CHANGE')
    const all = valueOf(await call('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2', replace_all: true }))
    expect(all.replacements).toBe(3)
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('x = 2\ny = 2\nx = 2\n\nx = 2\n')
  })

  it('counts three million matches on one long line without rescanning the line for each (minified files)', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'min.js'), `${'a'.repeat(3_000_000)}\nend\n`)
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const started = performance.now()
    const many = await call('edit', { path: 'min.js', old_string: 'a', new_string: 'b' })
    expect(codeOf(many)).toBe('AMBIGUOUS_MATCH')
    expect(textOf(many)).toContain('matches 3000000 times in min.js (lines 1, 1, 1,')
    const all = valueOf(await call('edit', { path: 'min.js', old_string: 'a', new_string: 'b', replace_all: true }))
    expect(all.replacements).toBe(3_000_000)
    expect(await readFile(join(root, 'min.js'), 'utf8')).toBe(`${'b'.repeat(3_000_000)}\nend\n`)
    // A hang bound: linear takes a second or two here; rescanning the line per match takes minutes (1 MB: 16 s, 3 MB ~9×).
    expect(performance.now() - started).toBeLessThan(30_000)
  }, 120_000)

  it('matches LF old_string in a CRLF file and keeps CRLF, and keeps the mode', async () => {
    const root = await tempDir()
    const path = join(root, 'win.txt')
    await writeFile(path, 'alpha\r\nbeta\r\ngamma\r\n')
    await chmod(path, 0o640)
    const { call } = await loadFs(root)
    valueOf(await call('read', { path: 'win.txt' }))
    const value = valueOf(await call('edit', { path: 'win.txt', old_string: 'alpha\nbeta', new_string: 'alpha\nBETA\nbeta2' }))
    expect(value.after).toBe('alpha\r\nBETA\r\nbeta2\r\ngamma\r\n')
    expect(await readFile(path, 'utf8')).toBe('alpha\r\nBETA\r\nbeta2\r\ngamma\r\n')
    expect((await stat(path)).mode & 0o7777).toBe(0o640)
    // Single-line edits keep the line endings around them.
    valueOf(await call('edit', { path: 'win.txt', old_string: 'gamma', new_string: 'GAMMA' }))
    expect(await readFile(path, 'utf8')).toBe('alpha\r\nBETA\r\nbeta2\r\nGAMMA\r\n')
  })

  it('refuses missing, binary and directory targets with codes', async () => {
    const root = await tempDir()
    await writeFile(join(root, 'bin.dat'), Buffer.from([1, 0, 2, 3]))
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    expect(codeOf(await call('edit', { path: 'missing.txt', old_string: 'a', new_string: 'b' }))).toBe('NOT_FOUND')
    expect(codeOf(await call('edit', { path: 'bin.dat', old_string: 'a', new_string: 'b' }))).toBe('BINARY_FILE')
    expect(codeOf(await call('edit', { path: '.', old_string: 'a', new_string: 'b' }))).toBe('IS_DIRECTORY')
    expect(codeOf(await call('write', { path: '.', content: 'x' }))).toBe('IS_DIRECTORY')
  })

  it('computes no presentation meta for nested calls', async () => {
    const root = await tempDir()
    const { call } = await loadFs(root)
    const nested = await call('write', { path: 'n.txt', content: 'x\n' }, { parent: Symbol('run_code') })
    expect(nested.isError).toBe(false)
    expect(nested.meta).toBeUndefined()
  })
})
