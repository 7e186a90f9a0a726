import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { SessionExitedError } from './errors.js'
import type { TerminalToolOptions } from './options.js'
import { SessionSnapshotSchema } from './schemas.js'
import { describeState } from './view.js'

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGHUP', 'SIGQUIT', 'SIGTSTP', 'SIGCONT', 'SIGUSR1', 'SIGUSR2'] as const

const parameters = Schema.object({
  id: Schema.string().min(1).required().description('Session id from terminal_open.'),
  signal: Schema.union(SIGNALS).required().description('Signal for the program in the foreground of the terminal.'),
})

const output = Schema.object({
  session: SessionSnapshotSchema.required(),
  signal: Schema.union(SIGNALS).required(),
  processGroup: Schema.natural().required().description('The foreground process group that received it.'),
})

/** The `terminal_signal` tool. */
export function terminalSignalTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_signal',
    description:
      'Send a signal to the foreground program of a terminal session (SIGINT to interrupt one that ignores Ctrl-C input, SIGKILL for a hung one). The session stays open.',
    parameters,
    output: {
      schema: output,
      render: (_args, value) => [
        {
          type: 'text',
          text: `Sent ${value.signal} to process group ${value.processGroup} (the foreground of ${value.session.id}). See the effect with terminal_read.`,
        },
      ],
    },
    execute(args, exec) {
      const session = options.table.get(args.id, exec.agent)
      if (session.state === 'exited') throw new SessionExitedError(session.id, describeState(session.snapshot()).replace(`${session.id} `, ''))
      const processGroup = session.deliver(args.signal)
      return { session: session.snapshot(), signal: args.signal, processGroup }
    },
  })
}
