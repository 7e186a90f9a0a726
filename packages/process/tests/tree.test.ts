import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { ProcessTree, TREE_VARIABLE } from '../src/index.js'

const dirs: string[] = []
const started: number[] = []
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
})
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-process-'))
  dirs.push(dir)
  return dir
}

/** Whether `pid` is a live process (a zombie counts as gone), read from `ps`-independent /proc. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

async function until(check: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return true
}

function readNumber(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim())
  } catch {
    return 0
  }
}

/** Runs `script` with bash as the leader of its own session, with `env`; resolves once `file` holds a pid. */
async function run(script: string, env: Record<string, string | undefined>, file: string): Promise<{ leader: number; pid: number }> {
  const child = spawn('bash', ['-c', script], { env, detached: true, stdio: 'ignore' })
  child.unref()
  started.push(child.pid!)
  let pid = 0
  expect(await until(() => (pid = readNumber(file)) > 0)).toBe(true)
  started.push(pid)
  return { leader: child.pid!, pid }
}

describe('a process tree', () => {
  it('finds an orphan that left the session with setsid (its parent gone) by the marker it inherited, and kills it', async () => {
    const dir = tempDir()
    const tree = new ProcessTree(undefined)
    const file = join(dir, 'orphan.pid')
    // A double fork: the subshell exits at once, so the setsid sleep is re-parented to init in a new session.
    const { leader, pid } = await run(`(setsid sleep 1000 & echo $! > ${file}) ; sleep 1000`, tree.environment({ PATH: process.env.PATH! }), file)
    tree.adopt(leader)
    expect(tree.members()).toEqual(expect.arrayContaining([leader, pid]))
    expect(await tree.terminate({ graceMs: 2000 })).toBe(true)
    expect(alive(pid)).toBe(false)
    expect(alive(leader)).toBe(false)
    expect(tree.members()).toEqual([])
    expect(tree.alive()).toBe(false)
  })

  it('leaves processes without its marker alone, even ones started after it', async () => {
    const dir = tempDir()
    const tree = new ProcessTree(undefined)
    const { leader } = await run(`echo $$ > ${dir}/a.pid; exec sleep 1000`, tree.environment({ PATH: process.env.PATH! }), join(dir, 'a.pid'))
    tree.adopt(leader)
    const other = new ProcessTree(undefined)
    const { pid: stranger } = await run(`echo $$ > ${dir}/b.pid; exec sleep 1000`, other.environment({ PATH: process.env.PATH! }), join(dir, 'b.pid'))
    expect(tree.members()).toEqual([leader])
    expect(await tree.terminate({ graceMs: 2000 })).toBe(true)
    expect(alive(stranger)).toBe(true)
  })

  it('a tree started inside another carries both tokens: the outer one still finds its processes', async () => {
    const dir = tempDir()
    const outer = new ProcessTree(undefined)
    const inner = new ProcessTree(outer.marker)
    expect(inner.marker).toBe(`${outer.token}:${inner.token}`)
    const { pid } = await run(`setsid sleep 1000 & echo $! > ${dir}/x.pid; wait`, inner.environment({ PATH: process.env.PATH! }), join(dir, 'x.pid'))
    expect(outer.members()).toContain(pid)
    expect(inner.members()).toContain(pid)
    expect(await outer.terminate({ graceMs: 2000 })).toBe(true)
    expect(alive(pid)).toBe(false)
  })

  it('marked(token) ends what a dead process left behind under its token, and nothing else', async () => {
    const dir = tempDir()
    // A process (here: its environment) that marked everything it started, then died: its trees' markers start with its token.
    const token = 'deadworker1'
    const inside = new ProcessTree(token)
    const { pid: orphan } = await run(`setsid sleep 1000 & echo $! > ${dir}/o.pid`, inside.environment({ PATH: process.env.PATH! }), join(dir, 'o.pid'))
    const unrelated = new ProcessTree(undefined)
    const { pid: stranger } = await run(`setsid sleep 1000 & echo $! > ${dir}/s.pid`, unrelated.environment({ PATH: process.env.PATH! }), join(dir, 's.pid'))
    const sweep = ProcessTree.marked(token)
    expect(sweep.members()).toEqual([orphan])
    expect(await sweep.terminate({ graceMs: 2000 })).toBe(true)
    expect(alive(orphan)).toBe(false)
    expect(alive(stranger)).toBe(true)
    expect(() => ProcessTree.marked('a:b')).toThrow(RangeError)
    expect(() => ProcessTree.marked('')).toThrow(RangeError)
  })

  it('escalates to SIGKILL when a member ignores SIGTERM, and signals what members fork meanwhile', async () => {
    const dir = tempDir()
    const tree = new ProcessTree(undefined)
    // On SIGTERM it starts another setsid process (reporting its pid), then keeps ignoring the signal.
    const script = `trap 'setsid sleep 1002 & echo $! > ${dir}/late.pid' TERM; echo $$ > ${dir}/a.pid; while :; do sleep 0.05; done`
    const { leader } = await run(script, tree.environment({ PATH: process.env.PATH! }), join(dir, 'a.pid'))
    tree.adopt(leader)
    expect(await tree.terminate({ graceMs: 500 })).toBe(true)
    expect(alive(leader)).toBe(false)
    const late = Number(readFileSync(join(dir, 'late.pid'), 'utf8'))
    started.push(late)
    expect(late).toBeGreaterThan(0)
    expect(alive(late)).toBe(false)
  })

  it('killNow kills every member synchronously', async () => {
    const dir = tempDir()
    const tree = new ProcessTree(undefined)
    const { leader, pid } = await run(`setsid sleep 1000 & echo $! > ${dir}/x.pid; wait`, tree.environment({ PATH: process.env.PATH! }), join(dir, 'x.pid'))
    tree.adopt(leader)
    tree.killNow()
    expect(await until(() => !alive(pid) && !alive(leader))).toBe(true)
  })

  it('sets the marker under its documented name, appended to an inherited value', () => {
    const tree = new ProcessTree('abc')
    expect(tree.environment({ A: '1' })).toEqual({ A: '1', [TREE_VARIABLE]: `abc:${tree.token}` })
    expect(TREE_VARIABLE).toBe('CORDAGE_PROCESS_TREE')
    const [first, second] = [new ProcessTree(undefined), new ProcessTree(undefined)]
    expect(first.marker).toMatch(/^[0-9a-f]{18}[0-9a-z]+$/)
    // Every tree of a process has its own token (a shared one would let one tree kill another's processes).
    expect(second.token).not.toBe(first.token)
  })
})
