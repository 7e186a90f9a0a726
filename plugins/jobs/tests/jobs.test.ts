import { describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import { contentText } from '@cordage/core'
import { createTestContext, testToolContract, valueOf as value } from '@cordage/testing'
import type { AgentNotice, JobSnapshot, JobsService } from '@cordage/services'
import { completionContext } from '../src/describe.js'
import { Jobs } from '../src/service.js'
import type { Config } from '../src/config.js'

testToolContract(Jobs, {
  cases: [
    { tool: 'job_list', arguments: {} },
    { tool: 'job_list', arguments: { state: 'running' } },
    { tool: 'job_output', arguments: { job_id: 'job_404' }, expect: 'error' },
    { tool: 'job_kill', arguments: { job_id: 'job_404' }, expect: 'error' },
    { tool: 'job_output', arguments: { job_id: 'job_1', max_chars: 0 }, expect: 'error' },
  ],
})

const SNAPSHOT_KEYS = ['droppedChars', 'durationMs', 'endedAt', 'error', 'exitCode', 'id', 'kind', 'outputChars', 'signal', 'startedAt', 'state', 'title']

async function setup(config: Partial<Config> = {}) {
  const ctx = await createTestContext()
  const fiber = await ctx.plugin(Jobs, config)
  const completed: JobSnapshot[] = []
  const notices: AgentNotice[] = []
  ctx.on('jobs/completed', (job) => void completed.push(job))
  ctx.on('agent/notice', (notice) => void notices.push(notice))
  return { ctx, fiber, completed, notices }
}

/** Loads a plugin that owns jobs, so its unloading can be observed. */
async function owner(ctx: Context) {
  let jobs!: JobsService
  const fiber = await ctx.plugin({ name: 'owner', inject: ['jobs'], apply: (inner: Context) => void (jobs = inner.jobs) })
  return { fiber, jobs }
}

describe('jobs service', () => {
  it('reads output incrementally with absolute offsets until the job exits, then emits jobs/completed', async () => {
    const { ctx, completed, notices } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'counting' })
    job.write('one\n')
    job.write(Buffer.from('two\n'), 'stderr')
    const first = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id } }))
    expect(first).toMatchObject({ offset: 0, nextOffset: 8, output: 'one\ntwo\n', droppedChars: 0, more: false })
    expect(first.job.state).toBe('running')
    job.write('three\n')
    job.exit({ exitCode: 3 })
    job.write('ignored after exit')
    const second = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, offset: first.nextOffset } })
    expect(value(second)).toMatchObject({ offset: 8, nextOffset: 14, output: 'three\n', more: false })
    expect(value(second).job).toMatchObject({ state: 'exited', exitCode: 3, signal: null, outputChars: 14 })
    expect(contentText(second.content)).toMatch(
      /^job_1 \[test\] exited with code 3 after \d+ ms, 14 chars of output: counting\nthree\n\(end of output at offset 14\)$/,
    )
    expect(completed).toHaveLength(1)
    expect(Object.keys(completed[0]!).sort()).toEqual(SNAPSHOT_KEYS)
    expect(completionContext(completed[0]!).text).toContain('Background job job_1 (test: counting) exited with code 3')
    // Agents learn of it through the generic notice event, worded by the jobs plugin.
    expect(notices).toEqual([completionContext(completed[0]!)])
  })

  it('loads with no config and applies the defaults', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(Jobs)
    const job = ctx.jobs.start({ kind: 'test', title: 'defaults' })
    job.write('x'.repeat(30_000))
    expect(ctx.jobs.read(job.id, 0, 30_000)).toMatchObject({ offset: 0, nextOffset: 30_000, dropped: 0 })
  })

  it('pages a long output with max_chars and reports more', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'long' })
    job.write('x'.repeat(25))
    const page = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, offset: 5, max_chars: 10 } }))
    expect(page).toMatchObject({ offset: 5, nextOffset: 15, output: 'x'.repeat(10), more: true })
  })

  it('keeps head and tail within the bound, reports dropped characters and keeps offsets absolute', async () => {
    const { ctx } = await setup({ headChars: 10, tailChars: 20 })
    const job = ctx.jobs.start({ kind: 'test', title: 'flood' })
    const text = Array.from({ length: 100 }, (_, index) => String(index % 10)).join('')
    for (let index = 0; index < text.length; index += 7) job.write(text.slice(index, index + 7))
    job.exit({ exitCode: 0 })
    const head = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id } }))
    expect(head).toMatchObject({ offset: 0, output: text.slice(0, 10), nextOffset: 10, droppedChars: 0, more: true })
    const gap = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, offset: 10 } })
    expect(value(gap)).toMatchObject({ offset: 80, output: text.slice(80), nextOffset: 100, droppedChars: 70, more: false })
    expect(value(gap).job).toMatchObject({ outputChars: 100, droppedChars: 70 })
    expect(contentText(gap.content)).toContain('[… 70 chars dropped; kept output resumes at offset 80 …]')
    const tail = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, offset: 95 } }))
    expect(tail).toMatchObject({ offset: 95, output: text.slice(95), droppedChars: 0 })
  })

  it('joins UTF-8 characters split across chunks', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'utf8' })
    const bytes = Buffer.from('héllo ✓')
    job.write(bytes.subarray(0, 2))
    job.write(bytes.subarray(2, 8))
    job.write(bytes.subarray(8))
    job.exit()
    expect(ctx.jobs.read(job.id).text).toBe('héllo ✓')
  })

  it('refuses an offset past the end with INVALID_OFFSET', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'short' })
    job.write('abc')
    const result = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, offset: 9 } })
    expect(result.isError && result.error.info?.code).toBe('INVALID_OFFSET')
    expect(contentText(result.content)).toContain("offset 9 is past the end of job_1's output (3 characters so far)")
  })

  it('wait_ms blocks until new output arrives', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'slow' })
    setTimeout(() => job.write('late\n'), 50)
    const read = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, wait_ms: 10_000 } }))
    expect(read.output).toBe('late\n')
  })

  it('wait_ms returns when the job exits and gives up at its deadline', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'quiet' })
    const idle = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, wait_ms: 30 } }))
    expect(idle).toMatchObject({ output: '', nextOffset: 0 })
    expect(idle.job.state).toBe('running')
    setTimeout(() => job.exit({ exitCode: 0 }), 30)
    const done = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, wait_ms: 10_000 } }))
    expect(done.job.state).toBe('exited')
  })

  it('an aborted wait settles promptly as ABORTED', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'quiet' })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 30)
    const started = Date.now()
    const result = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id, wait_ms: 60_000 }, signal: controller.signal })
    expect(result.isError && result.error.info?.code).toBe('ABORTED')
    // A hang bound: the abort comes after 30 ms, the wait it ends is a minute long.
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("job_kill calls the owner's kill, records killed and is a no-op for a finished job", async () => {
    const { ctx, completed } = await setup()
    const reasons: string[] = []
    const job = ctx.jobs.start({
      kind: 'test',
      title: 'victim',
      kill: async (reason) => {
        reasons.push(reason)
        job.exit({ signal: 'SIGTERM' })
      },
    })
    const killed = await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: job.id } })
    expect(value(killed)).toMatchObject({ killed: true, job: { state: 'killed', signal: 'SIGTERM' } })
    expect(contentText(killed.content)).toMatch(/^Killed: job_1 \[test\] killed \(SIGTERM\) after/)
    expect(job.signal.aborted).toBe(true)
    expect(reasons).toEqual(['killed by job_kill'])
    const again = value(await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: job.id } }))
    expect(again.killed).toBe(false)
    expect(completed.map((snapshot) => snapshot.state)).toEqual(['killed'])
  })

  it('records a job killed even when its owner never reports the end', async () => {
    const { ctx } = await setup({ killTimeoutMs: 20 })
    const job = ctx.jobs.start({ kind: 'test', title: 'stubborn' })
    expect(await ctx.jobs.kill(job.id)).toBe(true)
    expect(ctx.jobs.get(job.id)?.state).toBe('killed')
    expect(ctx.logs.some((log) => log.type === 'warn' && log.text.includes('did not report its end'))).toBe(true)
  })

  it('records a failure with its message', async () => {
    const { ctx } = await setup()
    const job = ctx.jobs.start({ kind: 'test', title: 'broken' })
    job.fail(new Error('spawn sh ENOENT'))
    expect(ctx.jobs.get(job.id)).toMatchObject({ state: 'failed', error: 'spawn sh ENOENT', exitCode: null })
  })

  it('job_list returns snapshots without owner bookkeeping, filtered by state', async () => {
    const { ctx } = await setup()
    const running = ctx.jobs.start({ kind: 'test', title: 'a', kill: () => {} })
    const done = ctx.jobs.start({ kind: 'test', title: 'b' })
    done.exit({ exitCode: 0 })
    const all = await ctx.tools.execute({ name: 'job_list', arguments: {} })
    expect(value(all).jobs.map((job: JobSnapshot) => [job.id, job.state])).toEqual([
      [running.id, 'running'],
      [done.id, 'exited'],
    ])
    for (const job of value(all).jobs) expect(Object.keys(job).sort()).toEqual(SNAPSHOT_KEYS)
    expect(JSON.stringify(value(all))).not.toMatch(/kill|owner|waiter|release|decoder/)
    expect(value(await ctx.tools.execute({ name: 'job_list', arguments: { state: 'exited' } })).jobs).toHaveLength(1)
    expect(contentText((await ctx.tools.execute({ name: 'job_list', arguments: { state: 'failed' } })).content)).toBe('No failed jobs.')
  })

  it('forgets the oldest finished jobs beyond maxFinishedJobs', async () => {
    const { ctx } = await setup({ maxFinishedJobs: 2 })
    const ids = [1, 2, 3].map(() => {
      const job = ctx.jobs.start({ kind: 'test', title: 't' })
      job.exit({ exitCode: 0 })
      return job.id
    })
    expect(ctx.jobs.list().map((job) => job.id)).toEqual(ids.slice(1))
    const gone = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: ids[0] } })
    expect(gone.isError && gone.error.info?.code).toBe('UNKNOWN_JOB')
  })

  it('unloading an owner kills the jobs it started, and only those', async () => {
    const { ctx, completed } = await setup()
    const { fiber, jobs } = await owner(ctx)
    const killed: string[] = []
    const mine = jobs.start({
      kind: 'test',
      title: 'mine',
      kill: (reason) => {
        killed.push(reason)
        mine.exit()
      },
    })
    const other = ctx.jobs.start({ kind: 'test', title: 'other', kill: () => other.exit() })
    await fiber.dispose()
    expect(killed).toEqual(['its owner was unloaded'])
    expect(ctx.jobs.get(mine.id)?.state).toBe('killed')
    expect(ctx.jobs.get(other.id)?.state).toBe('running')
    expect(completed.map((job) => job.id)).toEqual([mine.id])
  })

  it('a finished job no longer holds an effect on its owner', async () => {
    const { ctx } = await setup()
    const { fiber, jobs } = await owner(ctx)
    const before = fiber.getEffects().length
    const job = jobs.start({ kind: 'test', title: 'brief' })
    expect(fiber.getEffects().length).toBe(before + 1)
    job.exit({ exitCode: 0 })
    await Promise.resolve()
    expect(fiber.getEffects().length).toBe(before)
  })

  it('unloading the jobs service kills every running job and unregisters its tools', async () => {
    const { ctx, fiber, completed } = await setup()
    const stopped: string[] = []
    for (const title of ['a', 'b']) {
      const job = ctx.jobs.start({
        kind: 'test',
        title,
        kill: async () => {
          await new Promise((resolve) => setTimeout(resolve, 10))
          stopped.push(title)
          job.exit()
        },
      })
    }
    await fiber.dispose()
    expect(stopped.sort()).toEqual(['a', 'b'])
    expect(completed.map((job) => job.state)).toEqual(['killed', 'killed'])
    expect(ctx.tools.get('job_output')).toBeUndefined()
    expect(ctx.get('jobs')).toBeUndefined()
  })
})
