import { agentOptions, modelOptions } from '../args.js'
import { MODEL_ENVIRONMENT } from '../model-environment.js'
import { CliError, EXIT, errorMessage } from '../errors.js'
import type { Command } from './command.js'

/** `cordage run "<task>"`: one headless agent run, streamed; exits non-zero unless it completes. */
export const runCommand: Command = {
  name: 'run',
  summary: 'run the agent on one task, headless; streams text and tool calls',
  usage: '"<task>"',
  environment: MODEL_ENVIRONMENT,
  options: {
    ...modelOptions,
    ...agentOptions,
    queue: { type: 'boolean', description: 'enqueue the run for a `cordage worker` (queue: and store: in cordage.yml) and follow it' },
  },
  async run(input) {
    const { positionals, output, values } = input
    const task = positionals.join(' ').trim()
    if (!task) throw new CliError('usage: cordage run "<task>"')
    if (values.queue) {
      if (values.resume || values.record || values.plan) throw new CliError('run --queue: --resume, --record and --plan need a local run')
      const { runQueued } = await import('../queue/enqueue.js')
      return runQueued(input, task)
    }
    // Heavy modules load only when the command runs, so `--help` and usage errors stay fast.
    const [{ Progress }, { startAgent, exitCodeOf }, { StopSignals, signalExitCode, stoppedBy }, { containStrayErrors }] = await Promise.all([
      import('../progress.js'),
      import('./agent-setup.js'),
      import('../signals.js'),
      import('../containment.js'),
    ])
    const progress = new Progress(output, !!values.json)
    const release = containStrayErrors(output)
    const controller = new AbortController()
    // Installed before startup: a signal while plugins load stops the run before its first turn.
    const signals = new StopSignals((signal, again) => {
      if (again) process.exit(signalExitCode(signal))
      output.error(output.style('yellow', `\ninterrupted (${signal}): stopping the running tools and their processes (Ctrl-C again to quit now)`))
      controller.abort()
    })
    const setup = await startAgent(input, progress).catch((error) => {
      signals.dispose()
      release()
      throw error
    })
    let end: { reason: string; message?: string } | undefined
    try {
      const result = await setup.agent.run(task, { signal: controller.signal })
      end = signals.first ? stoppedBy(signals.first) : { reason: result.stopReason }
      progress.finish(result, setup.session)
      if (result.stopReason === 'max-turns')
        output.error(output.style('yellow', 'stopped: the turn limit was reached before the task completed (raise it with --max-turns)'))
      return signals.exitCode(exitCodeOf(result))
    } catch (error) {
      const { CordageError } = await import('@cordage/core')
      end = { reason: 'error', message: errorMessage(error) }
      const code = CordageError.is(error) ? ` (${error.code})` : ''
      output.error(output.style('red', `run failed${code}: ${errorMessage(error)}`))
      return signals.exitCode(error instanceof CliError ? error.exitCode : EXIT.failed)
    } finally {
      await setup.close(end)
      signals.dispose()
      release()
    }
  },
}
