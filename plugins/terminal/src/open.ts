import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { sessionCwd } from './cwd.js'
import type { TerminalToolOptions } from './options.js'
import { ViewSchema } from './schemas.js'
import { renderView, viewOf } from './view.js'
import { waitForOutput } from './wait.js'

function parameters(options: TerminalToolOptions) {
  return Schema.object({
    command: Schema.string()
      .min(1)
      .max(8192)
      .description(`Program to run, as \`${options.shell} -c <command>\` (e.g. "python3 -i", "vi notes.txt"). Default: an interactive ${options.shell}.`),
    cwd: Schema.string().description('Working directory, relative to the workspace root (default: the root).'),
    cols: Schema.natural().min(20).max(options.maxCols).default(options.cols).description(`Columns (default ${options.cols}).`),
    rows: Schema.natural().min(5).max(options.maxRows).default(options.rows).description(`Rows (default ${options.rows}).`),
    env: Schema.dict(Schema.string()).description('Extra environment variables for the program.'),
  })
}

/** The `terminal_open` tool. */
export function terminalOpenTool(options: TerminalToolOptions): ToolDefinition {
  return defineTool({
    name: 'terminal_open',
    description: `Start an interactive terminal session (a shell, a REPL, a full-screen program) that keeps its state between calls, and return its id and first screen. Use it for work that needs a persistent shell or interactive input; prefer bash for one-shot commands. Close sessions you no longer need with terminal_close.`,
    parameters: parameters(options),
    output: {
      schema: ViewSchema,
      render: (_args, value) => renderView(value, `opened in ${value.session.cwd}${value.session.state === 'running' ? '; type with terminal_send' : ''}`),
    },
    paths: [{ pointer: '/cwd', access: 'write', default: '.' }],
    timeoutMs: options.openWaitMs + 15_000,
    async execute(args, exec) {
      const cwd = await sessionCwd(options.root, args.cwd)
      const env = options.env(args.env)
      const command = args.command ?? [options.shell, ...options.shellArgs].join(' ')
      const argv = args.command === undefined ? options.shellArgs : ['-c', args.command]
      const session = options.table.open({
        owner: exec.agent ?? null,
        file: options.shell,
        args: argv,
        command,
        cwd,
        env,
        cols: args.cols,
        rows: args.rows,
        scrollback: options.scrollback,
        killGraceMs: options.killGraceMs,
      })
      // Show the startup screen (a prompt, a banner, an error) rather than a blank one.
      await waitForOutput(session, 0, { mode: 'quiet', quietMs: options.settleMs, ms: options.openWaitMs, afterOutput: true }, exec.signal)
      const view = viewOf(session, 0, 'tail', options.limits)
      // An aborted open hands back no id, so nothing could ever close the session: close it now.
      if (exec.signal.aborted) await options.table.close(session)
      return view
    },
  })
}
