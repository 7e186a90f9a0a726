import { agentOptions, modelOptions } from '../args.js'
import { CliError, EXIT, errorMessage } from '../errors.js'
import type { Command } from './command.js'

/** `cordage run "<task>"`: one headless agent run, streamed; exits non-zero unless it completes. */
export const runCommand: Command = {
  name: 'run',
  summary: 'run the agent on one task, headless; streams text and tool calls',
  usage: '"<task>"',
  options: { ...modelOptions, ...agentOptions },
  async run(input) {
    const { positionals, output, values } = input
    const task = positionals.join(' ').trim()
    if (!task) throw new CliError('usage: cordage run "<task>"')
    // Heavy modules load only when the command runs, so `--help` and usage errors stay fast.
    const [{ Progress }, { startAgent, exitCodeOf }] = await Promise.all([import('../progress.js'), import('./agent-setup.js')])
    const progress = new Progress(output, !!values.json)
    const setup = await startAgent(input, progress)
    const controller = new AbortController()
    const interrupt = () => {
      if (controller.signal.aborted) process.exit(130)
      output.error(output.style('yellow', '\ninterrupted: stopping after the running tools settle (Ctrl-C again to quit now)'))
      controller.abort()
    }
    process.on('SIGINT', interrupt)
    let end: { reason: string; message?: string } | undefined
    try {
      const result = await setup.agent.run(task, { signal: controller.signal })
      end = { reason: result.stopReason }
      progress.finish(result, setup.session)
      if (result.stopReason === 'max-turns') output.error(output.style('yellow', 'stopped: the turn limit was reached before the task completed (raise it with --max-turns)'))
      return exitCodeOf(result)
    } catch (error) {
      const { CordageError } = await import('@cordage/core')
      end = { reason: 'error', message: errorMessage(error) }
      const code = CordageError.is(error) ? ` (${error.code})` : ''
      output.error(output.style('red', `run failed${code}: ${errorMessage(error)}`))
      return error instanceof CliError ? error.exitCode : EXIT.failed
    } finally {
      process.off('SIGINT', interrupt)
      await setup.close(end)
    }
  },
}
