import { agentOptions, modelOptions } from '../args.js'
import { MODEL_ENVIRONMENT } from '../model-environment.js'
import { EXIT, errorMessage } from '../errors.js'
import { chatInput } from './chat-input.js'
import type { Command } from './command.js'

/** `cordage chat`: a REPL on stdin; each line is a user message in one continuing conversation. */
export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk to the agent: one line per message (/compact [focus] to compact, /exit or Ctrl-D to leave)',
  usage: '',
  environment: MODEL_ENVIRONMENT,
  options: {
    ...modelOptions,
    ...agentOptions,
    watch: { type: 'boolean', description: 'reload cordage.yml when it changes (between turns; the session goes on)' },
  },
  async run(input) {
    const { output, values, stdin } = input
    // Heavy modules load only when the command runs, so `--help` and usage errors stay fast.
    const [{ Progress }, { startAgent }, { StopSignals, signalExitCode, stoppedBy }, { containStrayErrors }] = await Promise.all([
      import('../progress.js'),
      import('./agent-setup.js'),
      import('../signals.js'),
      import('../containment.js'),
    ])
    const progress = new Progress(output, !!values.json)
    const release = containStrayErrors(output)
    const setup = await startAgent(input, progress).catch((error) => {
      release()
      throw error
    })
    let turn: ReturnType<typeof setup.agent.run> | undefined
    const watcher = values.watch
      ? (await import('../reload.js')).watchConfig(setup.runtime, { cwd: input.cwd, configFile: values.config as string | undefined, output, busy: () => turn })
      : undefined
    const interactive = (stdin as { isTTY?: boolean }).isTTY === true
    // Ctrl-C at the chat prompt ends the input (the prompt's readline sees it on a terminal).
    const lines = chatInput(stdin, interactive, interactive ? output.style('cyan', '› ') : '')
    let controller: AbortController | undefined
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
      for await (const line of lines) {
        // Lines already read stay queued after a stopping signal closed the input.
        if (signals.first) break
        const message = line.trim()
        if (message === '/exit' || message === '/quit') break
        if (message === '/compact' || message.startsWith('/compact ')) {
          controller = new AbortController()
          try {
            const focus = message.slice('/compact'.length).trim()
            const record = await setup.agent.compact({ signal: controller.signal, ...(focus && { focus }) })
            if (!record) output.error(output.style('dim', 'nothing to compact yet'))
          } catch (error) {
            failed = true
            output.error(output.style('red', `compaction failed: ${errorMessage(error)}`))
          }
          controller = undefined
          continue
        }
        if (message) {
          controller = new AbortController()
          try {
            // A reload in progress finishes before the turn starts; one that arrives during the turn waits for it.
            await watcher?.idle()
            turn = setup.agent.run(message, { signal: controller.signal })
            last = await turn
            progress.finish(last)
          } catch (error) {
            failed = true
            progress.idle()
            output.error(output.style('red', `turn failed: ${errorMessage(error)}`))
          }
          controller = undefined
          turn = undefined
        }
      }
    } finally {
      watcher?.close()
      await watcher?.idle()
      lines.close()
      output.error(output.style('dim', `session ${setup.session.id} saved to ${setup.session.file}`))
      await setup.close(signals.first ? stoppedBy(signals.first) : last && { reason: last.stopReason })
      signals.dispose()
      release()
    }
    return signals.exitCode(failed ? EXIT.failed : EXIT.ok)
  },
}
