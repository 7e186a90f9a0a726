import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { credentialSamples, exportSamples, harmlessSamples, killAfterEach } from '@cordage/testing'
import { alive, readPid as readPidOnce, setup, value } from './helpers.js'

// Whatever a failing test leaves behind is killed by pid, so one failure does not leak into the machine.
const seen = killAfterEach()

async function readPid(file: string): Promise<number> {
  const pid = await readPidOnce(file)
  seen.add(pid)
  return pid
}

function pids(file: string): number[] {
  const found = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number)
  for (const pid of found) seen.add(pid)
  return found
}

describe('processes that try to outlive a bash call', () => {
  it('a setsid child (its own session, holding no pipe) dies when the call ends', async () => {
    const { bash, root } = await setup()
    const file = join(root, 'setsid.pid')
    const result = await bash({ command: `setsid sleep 1000 >/dev/null 2>&1 < /dev/null & echo $! > ${file}; echo started` })
    expect(value(result)).toMatchObject({ exitCode: 0, stdout: 'started\n' })
    expect(alive(await readPid(file))).toBe(false)
  })

  it('a double-forked daemon (orphaned into a new session before the shell exits) dies when the call ends', async () => {
    const { bash, root } = await setup()
    const file = join(root, 'daemon.pid')
    await bash({ command: `(setsid sleep 1001 >/dev/null 2>&1 & echo $! > ${file}); sleep 0.1` })
    expect(alive(await readPid(file))).toBe(false)
  })

  it('fifty setsid children started in a burst all die with the call', async () => {
    const { bash, root } = await setup()
    const file = join(root, 'burst.pid')
    await bash({ command: `for i in $(seq 50); do setsid sleep 1002 >/dev/null 2>&1 & echo $! >> ${file}; done` })
    const started = pids(file)
    expect(started).toHaveLength(50)
    expect(started.filter(alive)).toEqual([])
  })

  it('a timeout kills a setsid child that ignores SIGTERM', async () => {
    const { bash, root } = await setup({ config: { killGraceMs: 200 } })
    const file = join(root, 'stubborn.pid')
    const pending = bash({ command: `setsid bash -c 'trap "" TERM; echo $$ > ${file}; while :; do sleep 0.05; done' >/dev/null 2>&1 & wait`, timeout_ms: 500 })
    const stubborn = await readPid(file)
    expect(value(await pending).timedOut).toBe(true)
    expect(alive(stubborn)).toBe(false)
  })

  it('job_kill of a background run kills a setsid grandchild', async () => {
    const { ctx, bash, root } = await setup()
    const file = join(root, 'job.pid')
    const { jobId } = value(await bash({ command: `setsid sleep 1003 >/dev/null 2>&1 & echo $! > ${file}; sleep 1000`, run_in_background: true }))
    const grandchild = await readPid(file)
    expect(alive(grandchild)).toBe(true)
    await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: jobId } })
    expect(alive(grandchild)).toBe(false)
  })

  it('unloading the plugin kills a setsid grandchild of a running command', async () => {
    const { bash, root, fiber } = await setup()
    const file = join(root, 'unload.pid')
    const pending = bash({ command: `setsid sleep 1004 >/dev/null 2>&1 & echo $! > ${file}; sleep 1000` })
    const grandchild = await readPid(file)
    await fiber.dispose()
    await pending
    expect(alive(grandchild)).toBe(false)
  })
})

describe('credentials in the host environment', () => {
  let restore: () => void
  beforeAll(() => void (restore = exportSamples()))
  afterAll(() => restore())

  it('none reaches a command, by name or by value; look-alikes do', async () => {
    const { bash } = await setup()
    const env = value(await bash({ command: 'env -0' })).stdout as string
    const names = new Set(env.split('\0').map((line) => line.slice(0, line.indexOf('='))))
    for (const name of Object.keys(credentialSamples)) expect(names).not.toContain(name)
    for (const name of Object.keys(harmlessSamples)) expect(names).toContain(name)
  })
})
