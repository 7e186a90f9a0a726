import { createInterface } from 'node:readline'
import { agentOptions, modelOptions } from '../args.js'
import { EXIT, errorMessage } from '../errors.js'
import type { Command } from './command.js'

/** `cordage chat`: a REPL on stdin; each line is a user message in one continuing conversation. */
export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk to the agent: one line per message (/exit or Ctrl-D to leave)',
  usage: '',
  options: { ...modelOptions, ...agentOptions },
  async run(input) {
    const { output, values, stdin } = input
    // Heavy modules load only when the command runs, so `--help` and usage errors stay fast.
    const [{ Progress }, { startAgent }, { StopSignals, signalExitCode, stoppedBy }, { containStrayErrors }] = await Promise.all([
      import('../progress.js'), import('./agent-setup.js'), import('../signals.js'), import('../containment.js'),
    ])
    const progress = new Progress(output, !!values.json)
    const release = containStrayErrors(output)
    const setup = await startAgent(input, progress).catch((error) => {
      release()
      throw error
    })
    const interactive = (stdin as { isTTY?: boolean }).isTTY === true
    const lines = createInterface({ input: stdin, output: interactive ? process.stdout : undefined, terminal: interactive })
    let closed = false
    lines.once('close', () => (closed = true))
    let controller: AbortController | undefined
    // Ctrl-C stops the running turn; at the prompt it leaves (readline sees it on a terminal).
    lines.on('SIGINT', () => (controller ? controller.abort() : lines.close()))
    // As signals: SIGINT during a turn stops the turn only; SIGINT at the prompt, SIGTERM and SIGHUP
    // stop the turn and leave. A second stopping signal exits at once.
    const signals = new StopSignals((signal, again) => {
      if (signal === 'SIGINT' && controller && !again) {
        controller.abort()
        return false
      }
      if (again) process.exit(signalExitCode(signal))
      controller?.abort()
      lines.close()
    })
    output.error(output.style('dim', `session ${setup.session.id} · ${setup.agent.messages.length ? 'resumed' : 'new'} · /exit to leave`))
    let failed = false
    let last
    try {
      if (interactive) lines.setPrompt(output.style('cyan', '› '))
      lines.prompt()
      for await (const line of lines) {
        // Lines already read stay queued after a stopping signal closed the input.
        if (signals.first) break
        const message = line.trim()
        if (message === '/exit' || message === '/quit') break
        if (message) {
          controller = new AbortController()
          try {
            last = await setup.agent.run(message, { signal: controller.signal })
            progress.finish(last)
          } catch (error) {
            failed = true
            progress.idle()
            output.error(output.style('red', `turn failed: ${errorMessage(error)}`))
          }
          controller = undefined
        }
        if (!closed) lines.prompt()
      }
    } finally {
      lines.close()
      output.error(output.style('dim', `session ${setup.session.id} saved to ${setup.session.file}`))
      await setup.close(signals.first ? stoppedBy(signals.first) : last && { reason: last.stopReason })
      signals.dispose()
      release()
    }
    return signals.exitCode(failed ? EXIT.failed : EXIT.ok)
  },
}
