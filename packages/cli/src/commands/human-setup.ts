import { CliError } from '../errors.js'
import { formatTodos, humanPlugin } from '../human.js'
import type { Progress } from '../progress.js'
import type { Runtime } from '../runtime.js'
import type { CommandInput } from './command.js'

/**
 * Makes the CLI the agent's human side: `approval` and `interaction` services (prompts on a terminal,
 * `--yes`/`--no` headless), `--plan`, and the todo list printed when it changes.
 */
/**
 * Ctrl-C at a prompt reaches the command's SIGINT handlers at once (synchronously, so the run stops
 * before its next step); with no handler, the process gets a real SIGINT and ends as usual.
 */
export function interrupt(): void {
  if (process.listenerCount('SIGINT') > 0) process.emit('SIGINT', 'SIGINT')
  else process.kill(process.pid, 'SIGINT')
}

export async function attachHuman(runtime: Runtime, input: CommandInput, progress: Progress): Promise<void> {
  const { values, stdin, output } = input
  if (values.yes && values.no) throw new CliError('--yes and --no contradict each other; give one')
  const interactive = (stdin as { isTTY?: boolean }).isTTY === true && process.stderr.isTTY === true
  await runtime.load(
    humanPlugin({
      interactive,
      ...(values.yes ? { preset: 'yes' as const } : values.no ? { preset: 'no' as const } : {}),
      output,
      io: { input: stdin, output: process.stderr, interrupt, prompting: (active) => progress.hold(active) },
    }),
  )
  if (values.plan) {
    const planMode = runtime.ctx.get('planMode')
    if (!planMode) throw new CliError('--plan needs @cordage/plugin-interaction: add it to cordage.yml')
    planMode.set(true)
  }
  runtime.ctx.on('todo/changed', (list) => progress.note(formatTodos(list, output), { type: 'todo', ...list }))
}
