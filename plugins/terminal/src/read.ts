import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import type { TerminalToolOptions } from './options.js'
import { ViewSchema } from './schemas.js'
import { renderView, viewOf } from './view.js'

const parameters = Schema.object({
  id: Schema.string().min(1).required().description('Session id from terminal_open.'),
  since: Schema.natural().description(
    'Also return the scrollback rows from this absolute row on (a previous result\'s "next read since" number); omit for the screen only.',
  ),
})

/** The `terminal_read` tool. */
export function terminalReadTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_read',
    description:
      "Show a terminal session's screen as a user sees it now (cursor included), and with `since` the rows that scrolled off the top since then. Works after the program exited, until terminal_close.",
    parameters,
    output: { schema: ViewSchema, render: (_args, value) => renderView(value, '') },
    concurrency: 'parallel',
    async execute(args, exec) {
      const session = options.table.get(args.id, exec.agent)
      if (session.state === 'running') await session.screen.flush()
      const view = viewOf(session, args.since, 'head', options.limits)
      // What the model has now seen no longer counts as unread: a program paused on unread output resumes.
      session.screen.markRead(args.since === undefined ? undefined : view.scrollback.next)
      return view
    },
  })
}
