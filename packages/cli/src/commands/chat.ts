import { createInterface } from 'node:readline'
import { agentOptions, modelOptions } from '../args.js'
import { EXIT, errorMessage } from '../errors.js'
import type { Command } from './command.js'

/** `cordage chat`: a REPL on stdin; each line is a user message in one continuing conversation. */
export const chatCommand: Command = {
  name: 'chat',
  summary: 'talk to the agent: one line per message (/exit or Ctrl-D to leave)',
  usage: '',
  options: { ...modelOptions, ...agentOptions, watch: { type: 'boolean', description: 'reload cordage.yml when it changes (between turns; the session goes on)' } },
  async run(input) {
    const { output, values, stdin } = input
    // Heavy modules load only when the command runs, so `--help` and usage errors stay fast.
    const [{ Progress }, { startAgent }] = await Promise.all([import('../progress.js'), import('./agent-setup.js')])
    const progress = new Progress(output, !!values.json)
    const setup = await startAgent(input, progress)
    let turn: ReturnType<typeof setup.agent.run> | undefined
    const watcher = values.watch
      ? (await import('../reload.js')).watchConfig(setup.runtime, { cwd: input.cwd, configFile: values.config as string | undefined, output, busy: () => turn })
      : undefined
    const interactive = (stdin as { isTTY?: boolean }).isTTY === true
    const lines = createInterface({ input: stdin, output: interactive ? process.stdout : undefined, terminal: interactive })
    let controller: AbortController | undefined
    // Ctrl-C stops the running turn; at the prompt it leaves.
    lines.on('SIGINT', () => (controller ? controller.abort() : lines.close()))
    const interrupt = () => controller?.abort()
    process.on('SIGINT', interrupt)
    output.error(output.style('dim', `session ${setup.session.id} · ${setup.agent.messages.length ? 'resumed' : 'new'} · /exit to leave`))
    let failed = false
    let last
    try {
      if (interactive) lines.setPrompt(output.style('cyan', '› '))
      lines.prompt()
      for await (const line of lines) {
        const message = line.trim()
        if (message === '/exit' || message === '/quit') break
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
        lines.prompt()
      }
    } finally {
      watcher?.close()
      await watcher?.idle()
      process.off('SIGINT', interrupt)
      lines.close()
      output.error(output.style('dim', `session ${setup.session.id} saved to ${setup.session.file}`))
      await setup.close(last && { reason: last.stopReason })
    }
    return failed ? EXIT.failed : EXIT.ok
  },
}
