import { agentOptions, modelOptions } from '../args.js'
import { EXIT, errorMessage } from '../errors.js'
import { chatInput } from './chat-input.js'
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
    const [{ Progress }, { startAgent }] = await Promise.all([import('../progress.js'), import('./agent-setup.js')])
    const progress = new Progress(output, !!values.json)
    const setup = await startAgent(input, progress)
    const interactive = (stdin as { isTTY?: boolean }).isTTY === true
    // Ctrl-C at the chat prompt leaves; during a turn (SIGINT below) it stops the turn.
    const lines = chatInput(stdin, interactive, interactive ? output.style('cyan', '› ') : '')
    let controller: AbortController | undefined
    const interrupt = () => controller?.abort()
    process.on('SIGINT', interrupt)
    output.error(output.style('dim', `session ${setup.session.id} · ${setup.agent.messages.length ? 'resumed' : 'new'} · /exit to leave`))
    let failed = false
    let last
    try {
      for await (const line of lines) {
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
      }
    } finally {
      process.off('SIGINT', interrupt)
      lines.close()
      output.error(output.style('dim', `session ${setup.session.id} saved to ${setup.session.file}`))
      await setup.close(last && { reason: last.stopReason })
    }
    return failed ? EXIT.failed : EXIT.ok
  },
}
