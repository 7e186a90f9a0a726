import { expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { Jobs } from '@cordage/plugin-jobs'
import { code, describeWithPty, eventually, sessionProcesses, setup, value } from './helpers.js'

const PROMPT = { env: { PS1: 'PROMPT> ' } }

/** A terminal context with the jobs service loaded too. */
async function withJobs() {
  const context = await setup()
  await context.ctx.plugin(Jobs, {})
  const jobOutput = async (jobId: string) =>
    value(await context.ctx.tools.execute({ name: 'job_output', arguments: { job_id: jobId, wait_ms: 20_000 } })) as {
      output: string
      job: { state: string; kind: string }
    }
  return { ...context, jobOutput }
}

describeWithPty('terminal_send: submit', () => {
  it('submit: true presses Enter after the input', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const sent = value(await call('send', { id: session.id, input: 'echo sub""mitted', submit: true, waitFor: '^submitted$' }))
    expect(sent.wait.reason).toBe('matched')
    expect(sent.screen.lines.slice(-3)).toEqual(['PROMPT> echo sub""mitted', 'submitted', 'PROMPT>'])
  })
})

describeWithPty('terminal_send: run_in_background', () => {
  it('returns a job at once; the job waits as asked and holds the final view as its output', async () => {
    const { open, call, jobOutput } = await withJobs()
    const { session } = await open(PROMPT)
    const started = await call('send', { id: session.id, input: 'sleep 0.3; echo done""-bg', submit: true, waitFor: '^done-bg$', run_in_background: true })
    const { jobId } = value(started)
    expect(value(started)).toEqual({ kind: 'background', jobId, session: session.id })
    expect(contentText(started.content)).toBe(
      `Sent "sleep 0.3; echo done\\"\\"-bg\\r" to ${session.id}; waiting in the background as ${jobId}.\nRead the result with job_output { "job_id": "${jobId}" } (add "wait_ms" to wait for it); job_kill interrupts the program with SIGINT.`,
    )
    // One send at a time: the background one holds the session until its wait ends.
    expect(code(await call('send', { id: session.id, input: '' }))).toBe('SEND_ACTIVE')
    let read = await jobOutput(jobId)
    while (read.job.state === 'running') read = await jobOutput(jobId)
    expect(read.job).toMatchObject({ kind: 'terminal', state: 'exited' })
    // The wait ends when `done-bg` is on screen; the shell may or may not have drawn its next prompt by then.
    expect(read.output).toMatch(
      /^done-bg\n(?:PROMPT>)?\n\[term_\d+ running; cursor at row \d+, col (?:1|9); next read since \d+; waitFor matched after \d+ ms\]\n$/m,
    )
    expect(value(await call('send', { id: session.id, input: 'echo again', submit: true, waitFor: '^again$' })).wait.reason).toBe('matched')
  })

  it('job_kill interrupts the foreground program with SIGINT and frees the session; the shell lives on', async () => {
    const { ctx, open, call } = await withJobs()
    const { session } = await open(PROMPT)
    const { jobId } = value(await call('send', { id: session.id, input: 'sleep 1000', submit: true, waitFor: 'never-printed', run_in_background: true }))
    expect(await eventually(() => sessionProcesses(session.pid).length > 1, 20_000)).toBe(true)
    const killed = value(await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: jobId } }))
    expect(killed.job.state).toBe('killed')
    const back = value(await call('send', { id: session.id, input: '', waitFor: '^PROMPT>$' }))
    expect(back.wait.reason).toBe('matched')
    expect(back.session.state).toBe('running')
    expect(sessionProcesses(session.pid)).toEqual([session.pid])
  })

  it('without the jobs service it is a JOBS_UNAVAILABLE failure and nothing is typed', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const result = await call('send', { id: session.id, input: 'echo typed', submit: true, run_in_background: true })
    expect(code(result)).toBe('JOBS_UNAVAILABLE')
    expect(value(await call('read', { id: session.id })).screen.lines).toEqual(['PROMPT>'])
  })

  it('unloading the terminal plugin ends a background send and kills the session it waits on', async () => {
    const { ctx, open, call, fiber } = await withJobs()
    const { session } = await open(PROMPT)
    const { jobId } = value(await call('send', { id: session.id, input: 'sleep 1000', submit: true, waitFor: 'never-printed', run_in_background: true }))
    await fiber.dispose()
    expect(sessionProcesses(session.pid)).toEqual([])
    const job = value(await ctx.tools.execute({ name: 'job_output', arguments: { job_id: jobId, wait_ms: 20_000 } }))
    expect(job.job.state).not.toBe('running')
  })
})
