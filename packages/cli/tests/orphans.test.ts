import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ProcessTree, readProcess } from '@cordage/process'
import type { WorkerIdentity } from '@cordage/queue'
import { processAlive } from '@cordage/testing'
import { endOrphansOf } from '../src/queue/orphans.js'
import type { Output } from '../src/output.js'

const started: number[] = []
const dirs: string[] = []
afterEach(() => {
  for (const pid of started.splice(0)) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A daemon (`setsid`, its parent gone) started under a worker's token, as a dead worker's command leaves one. */
async function orphanOf(token: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'cordage-orphans-'))
  dirs.push(dir)
  const file = join(dir, 'pid')
  const env = new ProcessTree(token).environment({ PATH: process.env.PATH! })
  const child = spawn('sh', ['-c', `setsid sleep 300 >/dev/null 2>&1 & echo $! > ${file}`], { env, stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  // Hang bound only: the pid file is written before sh exits.
  for (let waited = 0; !(existsSync(file) && readFileSync(file, 'utf8').trim()) && waited < 5000; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20))
  const pid = Number(readFileSync(file, 'utf8'))
  started.push(pid)
  return pid
}

/** A process that is dead by now: its pid and start time. */
async function deadProcess(): Promise<{ pid: number; start: number }> {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' })
  const start = readProcess(child.pid!)!.start
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  return { pid: child.pid!, start }
}

function recordingOutput(): Output & { lines: string[] } {
  const lines: string[] = []
  return { lines, error: (line: string) => void lines.push(line) } as unknown as Output & { lines: string[] }
}

const self: WorkerIdentity = { host: hostname(), pid: process.pid, start: readProcess(process.pid)?.start ?? 0, token: 'wselftoken' }

describe('ending what a dead worker left behind', () => {
  it('ends the processes carrying a dead worker’s token on this machine, and says so', async () => {
    const orphan = await orphanOf('wdeadtoken1')
    const bystander = await orphanOf('wothertoken')
    const output = recordingOutput()
    await endOrphansOf({ host: hostname(), ...(await deadProcess()), token: 'wdeadtoken1' }, self, output)
    expect(processAlive(orphan)).toBe(false)
    expect(processAlive(bystander)).toBe(true)
    expect(output.lines.join('\n')).toMatch(/ending 1 process left by worker \d+, which died/)
  })

  it('leaves a live worker’s processes alone (its lock merely expired), and those of another machine', async () => {
    const orphan = await orphanOf('wlivetoken1')
    const output = recordingOutput()
    // Alive: this very process stands for the previous owner.
    await endOrphansOf({ ...self, token: 'wlivetoken1' }, { ...self, token: 'wnexttoken' }, output)
    // Another machine: the same pid may name nothing here, but its processes are not here either.
    await endOrphansOf({ host: `${hostname()}-elsewhere`, ...(await deadProcess()), token: 'wlivetoken1' }, self, output)
    expect(processAlive(orphan)).toBe(true)
    expect(output.lines).toEqual([])
  })

  it('takes a reused pid for the dead worker it replaced (start times differ)', async () => {
    const orphan = await orphanOf('wreusedtok1')
    // This process's pid, with another start time: the previous owner is gone and its pid now names us.
    await endOrphansOf({ host: hostname(), pid: process.pid, start: self.start + 1, token: 'wreusedtok1' }, { ...self, token: 'wnexttoken' }, recordingOutput())
    expect(processAlive(orphan)).toBe(false)
  })
})
