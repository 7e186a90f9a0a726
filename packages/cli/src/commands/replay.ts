import type { messageOf } from '@cordage/agent'
import { CliError, EXIT } from '../errors.js'
import type { Output } from '../output.js'
import type { Command } from './command.js'
import { contentToText } from './render.js'

/** `cordage replay <session>`: the conversation exactly as the model and the user saw it. */
export const replayCommand: Command = {
  name: 'replay',
  summary: 'print a recorded session as the model and the user saw it',
  usage: '<session id or .jsonl file> [--json]',
  options: { json: { type: 'boolean', description: 'print the derived provider-neutral messages as JSON' } },
  async run({ positionals, output, cwd, values }) {
    const [target] = positionals
    if (!target) throw new CliError('usage: cordage replay <session id or .jsonl file>')
    const { deriveMessages, loadSession, messageOf: toMessage, resolveSessionFile } = await import('@cordage/agent')
    const session = loadSession(resolveSessionFile(target, { cwd }))
    for (const warning of session.warnings) output.error(output.style('yellow', `session: ${warning}`))
    if (values.json) {
      output.line(JSON.stringify(deriveMessages(session.events), null, 2))
      return EXIT.ok
    }
    output.error(output.style('dim', `session ${session.header.id} · ${session.header.createdAt} · ${session.header.cwd}${session.header.model ? ` · ${session.header.model}` : ''}`))
    for (const event of session.events) {
      if (event.type === 'tool/code-dispatch') {
        const { name, isError, index } = event.data
        output.line(output.style('dim', `    ↳ ${isError ? '✗' : '✓'} ${name} (nested call ${index + 1})`))
        continue
      }
      if (event.type === 'session/end') {
        output.line(output.style('dim', `── end: ${event.data.reason}${event.data.message ? ` (${event.data.message})` : ''} ──`))
        continue
      }
      const message = toMessage(event)
      if (message) printMessage(output, message)
    }
    return EXIT.ok
  },
}

function printMessage(output: Output, message: NonNullable<ReturnType<typeof messageOf>>): void {
  switch (message.role) {
    case 'tool':
      output.line(output.style(message.isError ? 'red' : 'cyan', `── tool ${message.name} [${message.callId}]${message.isError ? ' (error)' : ''} ──`))
      output.line(contentToText(message.content))
      return
    case 'assistant':
      output.line(output.style('green', '── assistant ──'))
      if (message.content) output.line(message.content)
      for (const call of message.toolCalls ?? []) output.line(output.style('dim', `  → ${call.name} ${call.arguments} [${call.id}]`))
      return
    default:
      output.line(output.style('bold', `── ${message.role} ──`))
      output.line(message.content)
  }
}
