import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { Jobs } from '@cordage/plugin-jobs'
import { FiberState } from '@cordage/registry'
import type { JobSnapshot } from '@cordage/services'
import { alive, readPid, setup, value } from './helpers.js'

describe('bash in the background', () => {
  it('starts a job whose output is read with offsets to completion, then emits jobs/completed', async () => {
    const { ctx, bash } = await setup()
    const completed: JobSnapshot[] = []
    ctx.on('jobs/completed', (job) => void completed.push(job))
    const command = 'for i in 1 2 3; do echo line $i; sleep 0.2; done; echo warn >&2; exit 4'
    const started = await bash({ command, run_in_background: true })
    const { jobId } = value(started)
    expect(value(started)).toEqual({ kind: 'background', jobId })
    expect(contentText(started.content)).toBe(
      `Started in the background as ${jobId}: ${command}\nRead its output with job_output { "job_id": "${jobId}" } (add "wait_ms" to wait for more); stop it with job_kill.`,
    )
    let offset = 0
    let output = ''
    const offsets: number[] = []
    for (let reads = 0; reads < 50; reads++) {
      const read = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: jobId, offset, wait_ms: 5_000 } }))
      expect(read.offset).toBe(offset)
      output += read.output
      offset = read.nextOffset
      offsets.push(offset)
      if (read.job.state !== 'running' && !read.more) {
        expect(read.job).toMatchObject({ kind: 'bash', title: command, state: 'exited', exitCode: 4, signal: null, outputChars: output.length })
        break
      }
    }
    expect(output).toBe('line 1\nline 2\nline 3\nwarn\n')
    expect(offsets.length).toBeGreaterThan(1)
    expect(completed.map((job) => [job.id, job.state, job.exitCode])).toEqual([[jobId, 'exited', 4]])
  })

  it("job_kill kills the job's whole process tree", async () => {
    const { ctx, bash, root } = await setup()
    const pidFile = join(root, 'bg.pid')
    const { jobId } = value(await bash({ command: `bash -c 'sleep 1240 & echo $! > ${pidFile}; wait' & wait`, run_in_background: true }))
    const grandchild = await readPid(pidFile)
    expect(alive(grandchild)).toBe(true)
    const killed = value(await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: jobId } }))
    expect(killed).toMatchObject({ killed: true, job: { state: 'killed', signal: 'SIGTERM' } })
    expect(alive(grandchild)).toBe(false)
  })

  it('job_list shows bash jobs as public snapshots only', async () => {
    const { ctx, bash } = await setup()
    const { jobId } = value(await bash({ command: 'sleep 5', run_in_background: true }))
    const listed = value(await ctx.tools.execute({ name: 'job_list', arguments: {} }))
    expect(listed.jobs).toHaveLength(1)
    expect(Object.keys(listed.jobs[0]).sort()).toEqual([
      'droppedChars',
      'durationMs',
      'endedAt',
      'error',
      'exitCode',
      'id',
      'kind',
      'outputChars',
      'signal',
      'startedAt',
      'state',
      'title',
    ])
    expect(listed.jobs[0]).toMatchObject({ id: jobId, kind: 'bash', title: 'sleep 5', state: 'running' })
    await ctx.jobs.kill(jobId)
  })

  it('without the jobs service, run_in_background is a JOBS_UNAVAILABLE failure', async () => {
    const { bash } = await setup({ jobs: false })
    const result = await bash({ command: 'sleep 5', run_in_background: true })
    expect(result.isError && result.error.info?.code).toBe('JOBS_UNAVAILABLE')
    expect(contentText(result.content)).toContain('load @cordage/plugin-jobs')
  })

  it('finds the jobs service per call, whatever the load order, without reloading', async () => {
    const { ctx, bash, fiber } = await setup({ jobs: false })
    expect(value(await bash({ command: 'echo fg' })).stdout).toBe('fg\n')
    const jobsFiber = await ctx.plugin(Jobs, {})
    const { jobId } = value(await bash({ command: 'echo bg', run_in_background: true }))
    expect(ctx.jobs.get(jobId)?.kind).toBe('bash')
    await jobsFiber.dispose()
    const result = await bash({ command: 'echo bg', run_in_background: true })
    expect(result.isError && result.error.info?.code).toBe('JOBS_UNAVAILABLE')
    expect(fiber.state).toBe(FiberState.ACTIVE) // still active: never restarted by the jobs service coming and going
  })

  it('a background spawn failure is a SPAWN_FAILED failure and starts no job', async () => {
    const { ctx, bash } = await setup({ config: { shell: '/nonexistent/sh' } })
    const result = await bash({ command: 'echo hi', run_in_background: true })
    expect(result.isError && result.error.info?.code).toBe('SPAWN_FAILED')
    expect(ctx.jobs.list()).toEqual([])
  })
})

describe('unloading', () => {
  it('unloading the shell plugin kills its foreground command and its background jobs', async () => {
    const { ctx, bash, root, fiber } = await setup()
    const foregroundPid = join(root, 'fg.pid')
    const pending = bash({ command: `sleep 1241 & echo $! > ${foregroundPid}; wait` })
    const { jobId } = value(await bash({ command: `sleep 1242 & echo $! > ${join(root, 'bg.pid')}; wait`, run_in_background: true }))
    const pids = [await readPid(foregroundPid), await readPid(join(root, 'bg.pid'))]
    expect(pids.map(alive)).toEqual([true, true])
    await fiber.dispose()
    expect(pids.map(alive)).toEqual([false, false])
    expect(ctx.jobs.get(jobId)?.state).toBe('killed')
    expect(value(await pending)).toMatchObject({ signal: 'SIGTERM', timedOut: false })
    expect(ctx.tools.get('bash')).toBeUndefined()
  })

  it('unloading the jobs service kills running bash jobs', async () => {
    const { bash, root, jobsFiber } = await setup()
    await bash({ command: `sleep 1243 & echo $! > ${join(root, 'a.pid')}; wait`, run_in_background: true })
    await bash({ command: `sleep 1244 & echo $! > ${join(root, 'b.pid')}; wait`, run_in_background: true })
    const pids = [await readPid(join(root, 'a.pid')), await readPid(join(root, 'b.pid'))]
    await jobsFiber!.dispose()
    expect(pids.map(alive)).toEqual([false, false])
  })
})
