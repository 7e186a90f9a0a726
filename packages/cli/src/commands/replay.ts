import type { Message, SessionEvent, SessionHeader } from '@cordage/agent'
import type { SessionStore } from '@cordage/services'
import { stringOption } from '../args.js'
import { CliError, EXIT } from '../errors.js'
import type { Output } from '../output.js'
import type { Command } from './command.js'
import { contentToText } from './render.js'
import { replayHtml } from './replay-html.js'
import { errorMessage } from '@cordage/core'

/** A session to print, and how to find the child sessions started by its calls (by call id). */
interface Replayed {
  key: string
  header: SessionHeader
  events: readonly SessionEvent[]
  warnings: readonly string[]
  children(): Promise<Map<string, Replayed[]>>
}

/** `cordage replay <session>`: the conversation exactly as the model and the user saw it. */
export const replayCommand: Command = {
  name: 'replay',
  summary: 'print a recorded session as the model and the user saw it',
  usage: '<session id or .jsonl file> [--json | --html [--out <file>]]',
  options: {
    json: { type: 'boolean', description: 'print the derived provider-neutral messages as JSON' },
    html: { type: 'boolean', description: 'write the session (and its child sessions) as one self-contained HTML file; prints its path' },
    out: { type: 'string', description: 'the file --html writes (default <session id>.html in the working directory)' },
  },
  async run(input) {
    const { positionals, output, cwd, values } = input
    const [target] = positionals
    if (!target) throw new CliError('usage: cordage replay <session id or .jsonl file>')
    if (values.out !== undefined && !values.html) throw new CliError('--out is an option of --html: cordage replay --html <session> --out <file>')
    if (values.html) {
      if (values.json) throw new CliError('choose one of --json and --html')
      return replayHtml(target, input, stringOption(values, 'out'), stringOption(values, 'config'))
    }
    const agent = await import('@cordage/agent')
    // A session id with `store: { postgres }` in cordage.yml is read from PostgreSQL; a file path is always a file.
    const { readConfig } = await import('../config.js')
    const url = /[\\/]|\.jsonl$/.test(target) ? undefined : readConfig(cwd, stringOption(values, 'config'))?.store?.postgres
    const store = url ? await openPostgres(url) : undefined
    try {
      const session = store ? await fromStore(store, target) : fromFile(agent, agent.resolveSessionFile(target, { cwd }))
      for (const warning of session.warnings) output.error(output.style('yellow', `session: ${warning}`))
      if (values.json) {
        output.line(JSON.stringify(agent.deriveMessages(session.events), null, 2))
        return EXIT.ok
      }
      output.error(
        output.style(
          'dim',
          `session ${session.header.id} · ${session.header.createdAt} · ${session.header.cwd}${session.header.model ? ` · ${session.header.model}` : ''}`,
        ),
      )
      await printSession(agent, output, session, '', new Set([session.key]))
      return EXIT.ok
    } finally {
      await store?.close()
    }
  },
}

async function openPostgres(url: string): Promise<SessionStore & { close(): Promise<void> }> {
  const { PostgresSessionStore } = await import('@cordage/plugin-store-postgres')
  const store = new PostgresSessionStore({ url, poolSize: 2 })
  try {
    await store.open()
  } catch (error) {
    await store.close()
    throw new CliError(`store: cannot open PostgreSQL: ${errorMessage(error)}`)
  }
  return store
}

function fromFile(agent: typeof import('@cordage/agent'), file: string): Replayed {
  const loaded = agent.loadSession(file)
  return {
    key: file,
    ...loaded,
    async children() {
      const byCall = new Map<string, Replayed[]>()
      for (const [callId, files] of agent.childSessionFiles(file, loaded.header.id))
        byCall.set(
          callId,
          files.map((child) => fromFile(agent, child)),
        )
      return byCall
    },
  }
}

async function fromStore(store: SessionStore, id: string): Promise<Replayed> {
  const stored = await store.read(id)
  return {
    key: id,
    header: stored.header,
    events: stored.events as SessionEvent[],
    warnings: stored.warnings,
    async children() {
      const byCall = new Map<string, Replayed[]>()
      // Oldest first, as the file store orders children.
      for (const summary of (await store.list({ parent: id })).toReversed()) {
        const callId = summary.header.parent!.callId
        byCall.set(callId, [...(byCall.get(callId) ?? []), await fromStore(store, summary.header.id)])
      }
      return byCall
    },
  }
}

/**
 * Prints a session's events; after the result of a call that started child runs (subagent, workflow,
 * ralph), prints each child session indented under it, recursively. `seen` guards against a cycle of
 * headers naming each other.
 */
async function printSession(agent: typeof import('@cordage/agent'), output: Output, session: Replayed, indent: string, seen: Set<string>): Promise<void> {
  const children = await session.children()
  const line = (text: string) =>
    output.line(
      indent
        ? text
            .split('\n')
            .map((part) => indent + part)
            .join('\n')
        : text,
    )
  for (const event of session.events) {
    if (event.type === 'tool/code-dispatch') {
      const { name, isError, index } = event.data
      line(output.style('dim', `    ↳ ${isError ? '✗' : '✓'} ${name} (nested call ${index + 1})`))
      continue
    }
    if (event.type === 'session/compact') {
      const { reason, keepFrom, cleared, tokensBefore, tokensAfter, summary } = event.data
      line(
        output.style(
          'yellow',
          `── compacted (${reason}): messages before #${keepFrom} summarized, ${cleared?.length ?? 0} results cleared, ${tokensBefore} → ${tokensAfter} tokens ──`,
        ),
      )
      if (summary) line(output.style('dim', summary))
      continue
    }
    if (event.type === 'run/end') {
      const { stopReason, turns, usage, cost } = event.data
      const tokens = usage.inputTokens || usage.outputTokens ? ` · ${agent.formatUsage(usage)} tokens · ${agent.formatCost(cost)}` : ''
      line(output.style('dim', `── run: ${stopReason} · ${turns} turn${turns === 1 ? '' : 's'}${tokens} ──`))
      continue
    }
    if (event.type === 'session/end') {
      line(output.style('dim', `── end: ${event.data.reason}${event.data.message ? ` (${event.data.message})` : ''} ──`))
      continue
    }
    const message = agent.messageOf(event)
    if (!message) continue
    printMessage(line, output, message)
    if (message.role !== 'tool') continue
    for (const child of children.get(message.callId) ?? []) {
      if (seen.has(child.key)) continue
      seen.add(child.key)
      line(output.style('dim', `  ┌ child run ${child.header.id} (depth ${child.header.depth ?? 1})`))
      await printSession(agent, output, child, `${indent}  │ `, seen)
    }
  }
}

function printMessage(line: (text: string) => void, output: Output, message: Message): void {
  switch (message.role) {
    case 'tool':
      line(output.style(message.isError ? 'red' : 'cyan', `── tool ${message.name} [${message.callId}]${message.isError ? ' (error)' : ''} ──`))
      line(contentToText(message.content))
      return
    case 'assistant':
      line(output.style('green', '── assistant ──'))
      // Reasoning is shown dimmed, as it was live; a redacted block has nothing readable.
      for (const block of message.thinking ?? []) line(output.style('dim', block.redacted !== undefined ? '[redacted thinking]' : block.text))
      if (message.content) line(message.content)
      for (const call of message.toolCalls ?? []) line(output.style('dim', `  → ${call.name} ${call.arguments} [${call.id}]`))
      return
    default:
      line(output.style('bold', `── ${message.role} ──`))
      line(message.content)
  }
}
