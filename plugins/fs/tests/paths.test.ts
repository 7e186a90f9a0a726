import { spawnSync } from 'node:child_process'
import { closeSync, constants, existsSync, openSync } from 'node:fs'
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, loadFs, tempDir, textOf, valueOf } from './helpers.js'

async function setup() {
  const base = await tempDir()
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  await mkdir(join(root, 'src'), { recursive: true })
  await mkdir(outside)
  await writeFile(join(outside, 'secret.txt'), 'secret\n')
  await writeFile(join(root, 'src', 'inside.txt'), 'inside\n')
  await symlink(join(outside, 'secret.txt'), join(root, 'leak.txt'))
  await symlink(outside, join(root, 'leakdir'))
  await symlink(join(root, 'src', 'inside.txt'), join(root, 'alias.txt'))
  return { base, root, outside }
}

describe('paths stay inside the workspace root', () => {
  it.each([
    ['read', { path: '../outside/secret.txt' }],
    ['read', { path: 'src/../../outside/secret.txt' }],
    ['write', { path: '../outside/new.txt', content: 'x' }],
    ['edit', { path: '../outside/secret.txt', old_string: 'secret', new_string: 'x' }],
    ['glob', { pattern: '*', path: '..' }],
    ['grep', { pattern: 'secret', path: '../outside' }],
  ])('%s %j is denied with PATH_OUTSIDE_ROOT', async (tool, args) => {
    const { root, outside } = await setup()
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const result = await call(tool, args)
    expect(codeOf(result)).toBe('PATH_OUTSIDE_ROOT')
    expect(textOf(result)).toContain('outside the workspace root')
    expect(existsSync(join(outside, 'new.txt'))).toBe(false)
  })

  it('denies absolute paths outside the root and accepts absolute paths inside it', async () => {
    const { root, outside } = await setup()
    const { call } = await loadFs(root)
    const denied = await call('read', { path: join(outside, 'secret.txt') })
    expect(codeOf(denied)).toBe('PATH_OUTSIDE_ROOT')
    expect(textOf(denied)).toBe(
      `Error: ${JSON.stringify(join(outside, 'secret.txt'))} is outside the workspace root ${root} (it resolves to ${join(outside, 'secret.txt')}); only paths inside the root are allowed`,
    )
    expect(valueOf(await call('read', { path: join(root, 'src', 'inside.txt') })).path).toBe('src/inside.txt')
  })

  it('follows symlinks: escaping files and directories are denied, for reads and for new files', async () => {
    const { root, outside } = await setup()
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const leak = await call('read', { path: 'leak.txt' })
    expect(codeOf(leak)).toBe('PATH_OUTSIDE_ROOT')
    expect(textOf(leak)).toContain('through a symlink')
    expect(codeOf(await call('read', { path: 'leakdir/secret.txt' }))).toBe('PATH_OUTSIDE_ROOT')
    expect(codeOf(await call('write', { path: 'leakdir/planted.txt', content: 'x' }))).toBe('PATH_OUTSIDE_ROOT')
    expect(codeOf(await call('write', { path: 'leakdir/deeper/planted.txt', content: 'x' }))).toBe('PATH_OUTSIDE_ROOT')
    expect(codeOf(await call('write', { path: 'leak.txt', content: 'x' }))).toBe('PATH_OUTSIDE_ROOT')
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false)
    expect(existsSync(join(outside, 'deeper'))).toBe(false)
  })

  it('accepts symlinks that stay inside and reports the real path; search never follows links out', async () => {
    const { root } = await setup()
    const { call } = await loadFs(root)
    expect(valueOf(await call('read', { path: 'alias.txt' })).path).toBe('src/inside.txt')
    for (const search of ['ripgrep', 'node'] as const) {
      const { call: searchCall } = await loadFs(root, { search })
      expect(valueOf(await searchCall('glob', { pattern: '**/*' })).paths).toEqual(['src/inside.txt'])
      expect(valueOf(await searchCall('grep', { pattern: 'secret|inside' })).matches).toEqual([{ path: 'src/inside.txt', lineNumber: 1, line: 'inside' }])
    }
  })

  it('allows outside paths when configured, shown as absolute paths', async () => {
    const { root, outside } = await setup()
    const { call } = await loadFs(root, { allowOutsideRoot: true })
    expect(valueOf(await call('read', { path: '../outside/secret.txt' })).path).toBe(join(outside, 'secret.txt'))
  })

  it('resolves a root that is itself a symlink', async () => {
    const { base, root } = await setup()
    await symlink(root, join(base, 'root-link'))
    const { call } = await loadFs(join(base, 'root-link'))
    expect(valueOf(await call('read', { path: 'src/inside.txt' })).lines).toEqual([{ number: 1, text: 'inside' }])
    expect(codeOf(await call('read', { path: 'leak.txt' }))).toBe('PATH_OUTSIDE_ROOT')
  })

  it('fails at load when the root does not exist', async () => {
    const base = await tempDir()
    await expect(loadFs(join(base, 'missing'))).rejects.toThrow(/config.root/)
  })
})

describe('declared path arguments', () => {
  it('every tool declares its path argument for path-aware policy', async () => {
    const root = await tempDir()
    const { ctx } = await loadFs(root)
    const declared = Object.fromEntries(['read', 'write', 'edit', 'glob', 'grep'].map((name) => [name, ctx.tools.get(name)?.paths]))
    expect(declared).toEqual({
      read: [{ pointer: '/path', access: 'read' }],
      write: [{ pointer: '/path', access: 'write' }],
      edit: [
        { pointer: '/path', access: 'read' },
        { pointer: '/path', access: 'write' },
      ],
      glob: [{ pointer: '/path', access: 'read', default: '.' }],
      grep: [{ pointer: '/path', access: 'read', default: '.' }],
    })
  })
})

describe('what was opened is verified', () => {
  it('reading a FIFO fails at once instead of blocking', async () => {
    const root = await tempDir()
    const made = spawnSync('mkfifo', [join(root, 'pipe')])
    if (made.status !== 0) return
    const { call } = await loadFs(root)
    const result = await call('read', { path: 'pipe' })
    expect(codeOf(result)).toBe('NOT_FOUND')
    expect(textOf(result)).toContain('not a regular file')
  })

  // Settles a call, or says it is still pending after `ms` (a blocked read never settles).
  const within = <T>(promise: Promise<T>, ms = 3000) =>
    Promise.race([promise, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), ms).unref())])

  it.each(['ripgrep', 'node'] as const)('grep of a FIFO fails at once instead of blocking (%s)', async (search) => {
    const root = await tempDir()
    const pipe = join(root, 'pipe')
    if (spawnSync('mkfifo', [pipe]).status !== 0) return
    const { fiber, call } = await loadFs(root, { search })
    const result = await within(call('grep', { pattern: 'x', path: 'pipe' }))
    // Give a reader still blocked on the FIFO its end of file, so nothing is left waiting.
    if (result === 'pending') closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK))
    await fiber.dispose()
    expect(result).not.toBe('pending')
    expect(codeOf(result as Exclude<typeof result, 'pending'>)).toBe('NOT_FOUND')
  })

  it('grep of a device (/dev/zero, allowed outside the root) fails at once instead of reading forever', async () => {
    const { fiber, call } = await loadFs(await tempDir(), { allowOutsideRoot: true, search: 'ripgrep' })
    const result = await within(call('grep', { pattern: 'x', path: '/dev/zero' }))
    await fiber.dispose()
    expect(result).not.toBe('pending')
    expect(textOf(result as Exclude<typeof result, 'pending'>)).toContain('not a regular file')
  })

  it('nothing is written outside the root: tree outside compared before and after every tool', async () => {
    const { base, root, outside } = await setup()
    const list = async () => (await readdir(base, { recursive: true })).filter((path) => !path.startsWith('root')).sort()
    const before = await list()
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const attempts: Array<[string, object]> = [
      ['write', { path: 'leakdir/a/b/c.txt', content: 'x' }],
      ['write', { path: 'leak.txt', content: 'x' }],
      ['edit', { path: 'leak.txt', old_string: 'secret', new_string: 'x' }],
      ['write', { path: '../outside/d.txt', content: 'x' }],
      ['write', { path: 'src/ok.txt', content: 'x' }],
    ]
    for (const [tool, args] of attempts) await call(tool, args)
    expect(await list()).toEqual(before)
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n')
    expect(existsSync(join(root, 'src', 'ok.txt'))).toBe(true)
  })
})
