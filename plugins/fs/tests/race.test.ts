import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { link, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import Policy from '@cordage/plugin-policy'
import { loadFs, tempDir } from './helpers.js'

// Swaps two names atomically in a loop with renameat2(RENAME_EXCHANGE): `root/d` is a real directory
// one instant and a symlink to the outside directory the next. Exits when its parent goes away.
const RACER = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
parent = os.getppid()
if libc.renameat2(-100, a, -100, b, 2) != 0:
    sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
print('ready', flush=True)
n = 0
while True:
    libc.renameat2(-100, a, -100, b, 2)
    n += 1
    if n % 4096 == 0 and os.getppid() != parent:
        break
`
const HAS_RACER = process.platform === 'linux' && spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0
const ATTEMPTS = 2000

const racers: ChildProcess[] = []
afterEach(() => {
  for (const racer of racers.splice(0)) racer.kill('SIGKILL')
})

/** Every file under `dir` (symlinks not followed) with its content, to compare before and after. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    out[path] = entry.isFile() ? await readFile(path, 'utf8') : entry.isSymbolicLink() ? 'symlink' : 'dir'
  }
  return out
}

/** root/d (inside*.txt) swapping with root/l → outside (inside.txt with other content, outside-only*.txt). */
async function setup() {
  const base = await tempDir('cordage-fs-race-')
  const root = join(base, 'root')
  const outside = join(base, 'outside')
  await mkdir(join(root, 'd'), { recursive: true })
  await mkdir(outside)
  await writeFile(join(root, 'd', 'inside.txt'), 'inside A\n')
  await writeFile(join(outside, 'inside.txt'), 'OUTSIDE A\n')
  await writeFile(join(outside, 'outside-only.txt'), 'OUTSIDE A\n')
  // Enough names on each side that glob's check lists the directory instead of looking names up one by one.
  for (let index = 0; index < 5; index++) {
    await writeFile(join(root, 'd', `inside-${index}.txt`), 'inside A\n')
    await writeFile(join(outside, `outside-only-${index}.txt`), 'OUTSIDE A\n')
  }
  await symlink(outside, join(root, 'l'))
  return { base, root, outside, before: await snapshot(outside) }
}

async function startRacer(root: string, swapped: [string, string] = ['d', 'l']): Promise<ChildProcess> {
  const racer = spawn('python3', ['-c', RACER, join(root, swapped[0]), join(root, swapped[1])], { stdio: ['ignore', 'pipe', 'inherit'] })
  racers.push(racer)
  await new Promise<void>((resolve, reject) => {
    racer.stdout!.once('data', () => resolve())
    racer.once('exit', (code) => reject(new Error(`racer exited with ${code}`)))
  })
  return racer
}

const openDescriptors = () => readdirSync('/proc/self/fd').length

/**
 * Runs `attempt` `count` times against the racer; returns how many calls succeeded. Every descriptor the
 * tools opened is closed again, refused or not (a few are the racer's pipe and vitest's own).
 */
async function race(root: string, count: number, attempt: (index: number) => Promise<boolean>, swapped?: [string, string]): Promise<number> {
  const racer = await startRacer(root, swapped)
  const descriptors = openDescriptors()
  let succeeded = 0
  for (let index = 0; index < count; index++) if (await attempt(index)) succeeded++
  racer.kill('SIGKILL')
  expect(openDescriptors()).toBeLessThanOrEqual(descriptors + 4)
  return succeeded
}

describe.skipIf(!HAS_RACER)('containment holds while a directory is swapped with a symlink to outside', () => {
  it(`read never returns outside content (${ATTEMPTS} attempts)`, async () => {
    const { root, outside, before } = await setup()
    const { call } = await loadFs(root)
    const escapes: string[] = []
    const succeeded = await race(root, ATTEMPTS, async () => {
      const result = await call('read', { path: 'd/inside.txt' })
      if (result.isError) return false
      if (JSON.stringify(result.value).includes('OUTSIDE')) escapes.push(JSON.stringify(result.value))
      return true
    })
    expect(escapes).toEqual([])
    expect(succeeded).toBeGreaterThan(0)
    expect(await snapshot(outside)).toEqual(before)
  }, 60_000)

  it(`read and edit never follow a file swapped for a symlink to outside (${ATTEMPTS / 2} attempts)`, async () => {
    const { root, outside, before } = await setup()
    await writeFile(join(root, 'f.txt'), 'inside A\n')
    await symlink(join(outside, 'inside.txt'), join(root, 'fl'))
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const escapes: string[] = []
    const succeeded = await race(
      root,
      ATTEMPTS / 2,
      async (index) => {
        const result =
          index % 2 ? await call('read', { path: 'f.txt' }) : await call('edit', { path: 'f.txt', old_string: 'A', new_string: 'A2', replace_all: true })
        if (result.isError) return false
        if (JSON.stringify(result.value).includes('OUTSIDE')) escapes.push(JSON.stringify(result.value))
        return true
      },
      ['f.txt', 'fl'],
    )
    expect(escapes).toEqual([])
    expect(await snapshot(outside)).toEqual(before)
    expect(succeeded).toBeGreaterThan(0)
  }, 60_000)

  it(`write never creates or changes a file outside the root (${ATTEMPTS} attempts)`, async () => {
    const { base, root, outside, before } = await setup()
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const succeeded = await race(root, ATTEMPTS, async (index) => {
      // New files (some in new subdirectories) and overwrites of a file that exists on both sides.
      const path = index % 3 === 0 ? `d/new-${index}.txt` : index % 3 === 1 ? `d/sub-${index}/new.txt` : 'd/inside.txt'
      return !(await call('write', { path, content: `written ${index}\n` })).isError
    })
    expect(await snapshot(outside)).toEqual(before)
    expect((await readdir(base)).sort()).toEqual(['outside', 'root'])
    expect(succeeded).toBeGreaterThan(0)
  }, 60_000)

  it(`edit never changes a file outside the root nor reports its content (${ATTEMPTS} attempts)`, async () => {
    const { root, outside, before } = await setup()
    const { call } = await loadFs(root, { requireReadBeforeWrite: false })
    const escapes: string[] = []
    const succeeded = await race(root, ATTEMPTS, async (index) => {
      const [from, to] = index % 2 ? ['A', 'B'] : ['B', 'A']
      const result = await call('edit', { path: 'd/inside.txt', old_string: from, new_string: to })
      if (result.isError) return false
      if (JSON.stringify(result.value).includes('OUTSIDE')) escapes.push(JSON.stringify(result.value))
      return true
    })
    expect(escapes).toEqual([])
    expect(await snapshot(outside)).toEqual(before)
    expect(succeeded).toBeGreaterThan(0)
  }, 60_000)

  it.each(['node', 'ripgrep'] as const)(
    'glob and grep (%s) never list outside files or content',
    async (search) => {
      const { root, outside, before } = await setup()
      const { call } = await loadFs(root, { search })
      // ripgrep spawns a process per call: fewer attempts keep the run short.
      const count = search === 'node' ? ATTEMPTS / 2 : ATTEMPTS / 8
      const escapes: string[] = []
      let listed = 0
      await race(root, count, async (index) => {
        const result =
          index % 2
            ? await call('glob', { pattern: '**/*.txt' })
            : await call('grep', { pattern: 'A$', path: ['d', '.', 'd/inside.txt', '.'][(index / 2) % 4] })
        if (result.isError) return false
        const text = JSON.stringify(result.value)
        if (/OUTSIDE|outside-only/.test(text)) escapes.push(text)
        if (/inside/.test(text)) listed++
        return true
      })
      expect(escapes).toEqual([])
      expect(listed).toBeGreaterThan(0)
      expect(await snapshot(outside)).toEqual(before)
    },
    60_000,
  )

  it.each([
    ['a hard link', link],
    ['a symlink', (target: string, path: string) => symlink(target, path)],
  ])(
    `read never returns a denied file through %s swapped in after the policy check (${ATTEMPTS} attempts)`,
    async (_kind, makeLink) => {
      const base = await tempDir('cordage-fs-race-')
      await writeFile(join(base, 'secret.txt'), 'TOP-SECRET\n')
      await writeFile(join(base, 'public.txt'), 'public\n')
      // alias.txt leads to public.txt one instant and to secret.txt the next.
      await makeLink(join(base, 'public.txt'), join(base, 'alias.txt'))
      await makeLink(join(base, 'secret.txt'), join(base, 'swap.txt'))
      const { ctx, call } = await loadFs(base)
      await ctx.plugin(Policy, { root: base, rules: [{ path: 'secret.txt', action: 'deny', reason: 'secret.txt is off limits' }] })
      const escapes: string[] = []
      let denied = 0
      const succeeded = await race(
        base,
        ATTEMPTS,
        async () => {
          // An agent's calls are separated by I/O (the model's next reply), which delivers the file system's change
          // events: the policy's cached resolution of alias.txt follows the swaps instead of keeping its first answer.
          await new Promise((resolve) => setImmediate(resolve))
          const result = await call('read', { path: 'alias.txt' })
          if (result.isError) {
            if (result.error.info?.code === 'DENIED') denied++
            return false
          }
          if (JSON.stringify(result.value).includes('SECRET')) escapes.push(JSON.stringify(result.value))
          return true
        },
        ['alias.txt', 'swap.txt'],
      )
      expect(escapes).toEqual([])
      // Both sides of the swap were seen: some reads got the public file, some were refused.
      expect(succeeded).toBeGreaterThan(0)
      expect(denied).toBeGreaterThan(0)
    },
    60_000,
  )

  it('the racer really swaps: without verification, opening by name reaches outside', async () => {
    const { root } = await setup()
    await startRacer(root)
    let outsideSeen = 0
    for (let index = 0; index < 500 && outsideSeen === 0; index++) {
      const text = await readFile(join(root, 'd', 'inside.txt'), 'utf8').catch(() => '')
      if (text.includes('OUTSIDE')) outsideSeen++
    }
    expect(outsideSeen).toBeGreaterThan(0)
  })
})
