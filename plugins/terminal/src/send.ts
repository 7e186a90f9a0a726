import Schema from 'schemastery'
import { defineTool, type ToolDefinition, errorMessage } from '@cordage/core'
import { InvalidPatternError, SendActiveError, SessionExitedError } from './errors.js'
import type { TerminalToolOptions } from './options.js'
import { SendBackgroundSchema, SendSchema, type SendBackgroundValue, type SendValue } from './schemas.js'
import { sendInBackground } from './send-background.js'
import { describeState, renderSend, viewOf } from './view.js'
import type { WaitRequest } from './wait.js'

function parameters(options: TerminalToolOptions) {
  return Schema.object({
    id: Schema.string().min(1).required().description('Session id from terminal_open.'),
    input: Schema.string()
      .max(65_536)
      .default('')
      .description('Keys to type, sent as is: end a command with "\\r" (Enter); "\\u0003" is Ctrl-C, "\\u001b" Escape, "\\u0004" Ctrl-D. "" only waits.'),
    waitForMs: Schema.natural()
      .min(1)
      .max(options.maxWaitMs)
      .description(
        `Wait this long (with waitFor: at most this long; default ${options.defaultWaitMs}). Without either, return once the output has been quiet for ${options.settleMs} ms (at most ${options.defaultWaitMs} ms).`,
      ),
    waitFor: Schema.string()
      .min(1)
      .max(1000)
      .description(
        'Return as soon as this regular expression (multiline: ^ and $ match at row ends; trailing blanks are trimmed) matches what your input changed: rows added or scrolled by since the send, and screen rows that were redrawn. With input "" it is tested against the whole screen at once.',
      ),
    submit: Schema.boolean().default(false).description('Press Enter after the input (appends "\\r"), as a user submits a command line.'),
    run_in_background: Schema.boolean()
      .default(false)
      .description(
        `Return a job id at once; the wait (waitFor, waitForMs, or quiet, bounded by ${options.maxWaitMs} ms) happens in the job, whose output is the final view. Read it with job_output; job_kill interrupts the program with SIGINT.`,
      ),
  })
}

/** What to wait for; `longest` bounds a wait the call did not bound (`defaultWaitMs`, or `maxWaitMs` in the background). */
function request(options: TerminalToolOptions, waitForMs: number | undefined, waitFor: string | undefined, longest: number): WaitRequest {
  if (waitFor === undefined) {
    return waitForMs === undefined ? { mode: 'quiet', quietMs: options.settleMs, ms: longest } : { mode: 'fixed', ms: waitForMs }
  }
  try {
    return { mode: 'pattern', pattern: new RegExp(waitFor, 'm'), ms: waitForMs ?? longest }
  } catch (error) {
    throw new InvalidPatternError(waitFor, errorMessage(error))
  }
}

/** The `terminal_send` tool. */
export function terminalSendTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_send',
    description:
      'Type input into a terminal session, wait (for a pattern, a time, or the output to go quiet), and return what scrolled by plus the screen. Keys are sent exactly as given: add "\\r" to press Enter, or pass submit: true.',
    parameters: parameters(options),
    output: {
      schema: Schema.union([SendSchema, SendBackgroundSchema]),
      render: (args, value) => {
        if (!('kind' in value)) return renderSend(value as SendValue)
        const input = JSON.stringify(args.input + (args.submit ? '\r' : ''))
        return [
          {
            type: 'text',
            text: `Sent ${input} to ${value.session}; waiting in the background as ${value.jobId}.\nRead the result with job_output { "job_id": "${value.jobId}" } (add "wait_ms" to wait for it); job_kill interrupts the program with SIGINT.`,
          },
        ]
      },
    },
    timeoutMs: options.maxWaitMs + 15_000,
    async execute(args, exec): Promise<SendValue | SendBackgroundValue> {
      const session = options.table.get(args.id, exec.agent)
      const input = args.submit ? `${args.input}\r` : args.input
      const wait = request(options, args.waitForMs, args.waitFor, args.run_in_background ? options.maxWaitMs : options.defaultWaitMs)
      if (session.state === 'exited') throw new SessionExitedError(session.id, describeState(session.snapshot()).replace(`${session.id} `, ''))
      if (session.sending) throw new SendActiveError(session.id)
      if (args.run_in_background) return sendInBackground(options, session, input, wait, exec.agent)
      session.sending = true
      try {
        const { since, outcome } = await session.send(input, wait, exec.signal)
        return { ...viewOf(session, since, 'tail', options.limits), wait: outcome }
      } finally {
        session.sending = false
        session.usedAt = Date.now()
      }
    },
  })
}
