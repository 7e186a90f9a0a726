import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import type { TerminalToolOptions } from './options.js'
import { SessionSnapshotSchema } from './schemas.js'
import { describeState } from './view.js'

const output = Schema.object({
  sessions: Schema.array(SessionSnapshotSchema).required(),
})

/** The `terminal_list` tool. */
export function terminalListTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_list',
    description: 'List your terminal sessions (running, and exited but not yet closed), oldest first.',
    parameters: Schema.object({}),
    output: {
      schema: output,
      render: (_args, { sessions }) => [
        {
          type: 'text',
          text: sessions.length
            ? sessions
                .map(
                  (session) =>
                    `${describeState(session)}: ${session.command} (pid ${session.pid}, ${session.cols}x${session.rows}, ${session.cwd})${session.title ? ` "${session.title}"` : ''}`,
                )
                .join('\n')
            : '(no terminal sessions)',
        },
      ],
    },
    concurrency: 'parallel',
    execute(_args, exec) {
      return { sessions: [...options.table.visible(exec.agent)].map((session) => session.snapshot()) }
    },
  })
}
