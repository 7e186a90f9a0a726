import { contentText, errorMessage } from '@cordage/core'
import { JobsUnavailableError } from './errors.js'
import type { TerminalToolOptions } from './options.js'
import type { SendBackgroundValue } from './schemas.js'
import type { TerminalSession } from './session.js'
import { renderSend, viewOf } from './view.js'
import type { WaitRequest } from './wait.js'

/**
 * Types `input` and waits as asked inside a job of `ctx.jobs`, owned by the calling agent: the job's
 * output is the final view as `terminal_send` renders it, and stopping the job (`job_kill`, unloading)
 * interrupts the foreground program with SIGINT and ends the wait. The session counts as sending (one
 * send at a time) until the job ends.
 */
export function sendInBackground(
  options: TerminalToolOptions,
  session: TerminalSession,
  input: string,
  wait: WaitRequest,
  agent: string | undefined,
): SendBackgroundValue {
  const jobs = options.jobs()
  if (!jobs) throw new JobsUnavailableError()
  let finished: Promise<void> = Promise.resolve()
  const job = jobs.start({
    kind: 'terminal',
    title: `${session.id}: ${JSON.stringify(input)}`,
    agent,
    kill: async () => {
      // As Ctrl-C would: the program in the foreground is interrupted, the shell stays.
      if (session.state === 'running') {
        try {
          session.deliver('SIGINT')
        } catch {
          // It ended meanwhile: the wait ends with it.
        }
      }
      await finished
    },
  })
  session.sending = true
  finished = (async () => {
    try {
      const { since, outcome } = await session.send(input, wait, job.signal)
      job.write(`${contentText(renderSend({ ...viewOf(session, since, 'tail', options.limits), wait: outcome }))}\n`)
      job.exit(session.state === 'exited' ? { exitCode: session.exitCode, signal: session.signal } : {})
    } catch (error) {
      job.fail(errorMessage(error))
    } finally {
      session.sending = false
      session.usedAt = Date.now()
    }
  })()
  return { kind: 'background', jobId: job.id, session: session.id }
}
