import Schema from 'schemastery'
import { defineTool, type ToolDefinition, errorMessage } from '@cordage/core'
import { InvalidPatternError, SendActiveError, SessionExitedError } from './errors.js'
import type { TerminalToolOptions } from './options.js'
import { SendSchema, type SendValue } from './schemas.js'
import { describeState, renderView, viewOf } from './view.js'
import type { WaitOutcome, WaitRequest } from './wait.js'

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
  })
}

const said: Record<WaitOutcome['reason'], (ms: number) => string> = {
  matched: (ms) => `waitFor matched after ${ms} ms`,
  quiet: (ms) => `output went quiet after ${ms} ms (the program may still be running)`,
  elapsed: (ms) => `waited ${ms} ms`,
  timeout: (ms) => `still waiting after ${ms} ms (the program may still be running)`,
  exited: (ms) => `the program ended after ${ms} ms`,
  aborted: (ms) => `the call was cancelled after ${ms} ms`,
}

function request(options: TerminalToolOptions, waitForMs: number | undefined, waitFor: string | undefined): WaitRequest {
  if (waitFor === undefined) {
    return waitForMs === undefined ? { mode: 'quiet', quietMs: options.settleMs, ms: options.defaultWaitMs } : { mode: 'fixed', ms: waitForMs }
  }
  try {
    return { mode: 'pattern', pattern: new RegExp(waitFor, 'm'), ms: waitForMs ?? options.defaultWaitMs }
  } catch (error) {
    throw new InvalidPatternError(waitFor, errorMessage(error))
  }
}

/** The `terminal_send` tool. */
export function terminalSendTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_send',
    description:
      'Type input into a terminal session, wait (for a pattern, a time, or the output to go quiet), and return what scrolled by plus the screen. Keys are sent exactly as given: add "\\r" to press Enter.',
    parameters: parameters(options),
    output: { schema: SendSchema, render: (_args, value) => renderView(value, said[value.wait.reason](value.wait.waitedMs)) },
    timeoutMs: options.maxWaitMs + 15_000,
    async execute(args, exec): Promise<SendValue> {
      const session = options.table.get(args.id, exec.agent)
      const wait = request(options, args.waitForMs, args.waitFor)
      if (session.state === 'exited') throw new SessionExitedError(session.id, describeState(session.snapshot()).replace(`${session.id} `, ''))
      if (session.sending) throw new SendActiveError(session.id)
      session.sending = true
      try {
        const { since, outcome } = await session.send(args.input, wait, exec.signal)
        return { ...viewOf(session, since, 'tail', options.limits), wait: outcome }
      } finally {
        session.sending = false
        session.usedAt = Date.now()
      }
    },
  })
}
