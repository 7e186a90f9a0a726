import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import type { TerminalToolOptions } from './options.js'
import { SessionSnapshotSchema } from './schemas.js'
import { describeState } from './view.js'

const parameters = Schema.object({
  id: Schema.string().min(1).required().description('Session id from terminal_open.'),
})

const output = Schema.object({
  session: SessionSnapshotSchema.required().description('The final snapshot.'),
  outcome: Schema.union(['closed', 'already-exited'] as const)
    .required()
    .description('`closed`: the program was running and was killed with everything it started.'),
})

/** The `terminal_close` tool. */
export function terminalCloseTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_close',
    description: 'Close a terminal session: kill its program and every process it started, and forget the session.',
    parameters,
    output: {
      schema: output,
      render: (_args, { session, outcome }) => [
        {
          type: 'text',
          text:
            outcome === 'closed'
              ? `Closed ${session.id} (${session.command}); it and every process it started were stopped.`
              : `Closed ${session.id} (${session.command}); the program had already ended (${describeState(session).replace(`${session.id} `, '')}).`,
        },
      ],
    },
    async execute(args, exec) {
      const session = options.table.get(args.id, exec.agent)
      const outcome = session.state === 'running' ? ('closed' as const) : ('already-exited' as const)
      await options.table.close(session)
      return { session: session.snapshot(), outcome }
    },
  })
}
