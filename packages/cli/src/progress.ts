import { addUsage, emptyUsage, formatCost, formatUsage, type AgentEvent, type AgentResult, type UsageTotals } from '@cordage/agent'
import { contentText } from '@cordage/core'
import type { AgentUsageEvent, ChildRunEvent } from '@cordage/services'
import { formatDuration, oneLine, type Output } from './output.js'

/** Streams an agent run: text as it arrives and one line per tool call with its status and duration. */
export class Progress {
  private atLineStart = true
  /** Reasoning is being printed (dimmed): the answer that follows starts on its own line. */
  private thinking = false
  /** A prompt is on screen: "still running" notices would draw into it. */
  private held = false
  private waiting: NodeJS.Timeout | undefined
  private readonly running = new Map<string, { name: string; summary: string; timer: NodeJS.Timeout }>()
  /** Every agent's model usage on the context, by its name (a child run's is its run id). */
  private readonly spent = new Map<string, { usage: UsageTotals; cost: number | undefined }>()

  constructor(
    private readonly output: Output,
    private readonly json: boolean,
    private readonly slowMs = 1500,
  ) {}

  /** The agent's `onEvent` listener. */
  readonly onEvent = (event: AgentEvent): void => {
    if (this.json) return this.output.json(event)
    if (event.type !== 'turn/start') this.idle()
    switch (event.type) {
      case 'turn/start':
        // A slow model announces itself too: nothing streamed yet is not a hang.
        this.waiting = setTimeout(() => this.print(this.output.style('dim', `  … waiting for the model (turn ${event.turn})`)), this.slowMs)
        this.waiting.unref()
        return
      case 'thinking/delta':
        if (!event.delta) return
        this.thinking = true
        this.output.write(this.output.style('dim', event.delta))
        this.atLineStart = event.delta.endsWith('\n')
        return
      case 'text/delta':
        if (this.thinking) this.endLine()
        this.thinking = false
        this.output.write(event.delta)
        if (event.delta) this.atLineStart = event.delta.endsWith('\n')
        return
      case 'tool/start': {
        const summary = summarize(event.arguments)
        // Long calls announce themselves, so a quiet terminal never looks stuck.
        const timer = setTimeout(() => this.held || this.print(this.output.style('dim', `  … ${event.name} ${summary} (running)`)), this.slowMs)
        timer.unref()
        this.running.set(event.callId, { name: event.name, summary, timer })
        return
      }
      case 'tool/end': {
        const started = this.running.get(event.callId)
        if (started) clearTimeout(started.timer)
        this.running.delete(event.callId)
        const mark = event.isError ? this.output.style('red', '✗') : this.output.style('green', '✓')
        const duration = this.output.style('dim', `(${formatDuration(event.durationMs)})`)
        const failure = event.isError
          ? ` ${this.output.style('red', `${event.code ?? 'ERROR'}: ${oneLine(contentText(event.content).replace(/^Error:\s*/, ''), 100)}`)}`
          : ''
        this.print(`  ${mark} ${this.output.style('bold', event.name)} ${started?.summary ?? ''} ${duration}${failure}`.replace(/ {2,}\(/, ' ('))
        return
      }
      case 'context':
        this.print(this.output.style('dim', `  + context from ${event.source}`))
        return
      case 'compact/start':
        this.print(this.output.style('dim', `  … compacting the conversation (${event.tokens.toLocaleString('en-US')} tokens, ${event.reason})`))
        return
      case 'compact':
        this.print(
          this.output.style(
            'dim',
            `  ✓ compacted: ${event.summarized} messages summarized, ${event.cleared} results cleared (${event.tokensBefore.toLocaleString('en-US')} → ${event.tokensAfter.toLocaleString('en-US')} tokens)`,
          ),
        )
        return
      case 'turn/end':
        this.thinking = false
        this.endLine()
        return
      default:
        return
    }
  }

  /** A nested (Code Mode) call finished inside a running tool call. */
  nested(name: string, isError: boolean, code?: string): void {
    if (this.json) return this.output.json({ type: 'tool/nested', name, isError, ...(code && { code }) })
    const mark = isError ? this.output.style('red', '✗') : this.output.style('green', '✓')
    this.print(this.output.style('dim', `    ↳ ${mark} ${name}${code ? ` ${code}` : ''}`))
  }

  /** While held (a prompt is on screen), "still running" notices are skipped. */
  hold(held: boolean): void {
    this.held = held
  }

  /** Prints a block of text between progress lines (`json`: what `--json` prints instead). */
  note(text: string, json: object): void {
    if (this.json) return this.output.json(json)
    this.print(text)
  }

  /** A child run (subagent, workflow agent, ralph round) started or ended: one line each, indented by depth. */
  child(event: ChildRunEvent): void {
    if (this.json) return this.output.json({ ...event, type: `child/${event.type}` })
    const indent = '  '.repeat(event.depth)
    const label = oneLine(event.label, 70)
    if (event.type === 'start') {
      this.print(this.output.style('dim', `${indent}┌ ${event.tool} ${label} (run ${event.runId})`))
      return
    }
    const mark = event.isError ? this.output.style('red', '✗') : this.output.style('green', '✓')
    const spent = event.usage ? { usage: event.usage, cost: event.cost } : this.spent.get(event.runId)
    const cost = spent ? ` · ${formatUsage(spent.usage)} · ${formatCost(spent.cost)}` : ''
    const duration = event.durationMs === undefined ? (cost ? ` (${cost.slice(3)})` : '') : ` (${formatDuration(event.durationMs)}${cost})`
    this.print(`${indent}${this.output.style('dim', '└')} ${mark} ${event.tool} ${label} ${this.output.style('dim', `${event.stopReason ?? ''}${duration}`)}`)
  }

  /** Counts one model request of any agent on the context (`agent/usage`): child runs' totals come from here. */
  usage(event: AgentUsageEvent): void {
    const key = event.agent ?? ''
    let spent = this.spent.get(key)
    if (!spent) this.spent.set(key, (spent = { usage: emptyUsage(), cost: 0 }))
    if (event.usage) addUsage(spent.usage, event.usage)
    spent.cost = spent.cost === undefined || event.cost === undefined ? undefined : spent.cost + event.cost
  }

  /** Prints the run's closing summary (to stderr, so stdout stays the model's text and tool lines). */
  finish(result: AgentResult, session?: { id: string; file: string }): void {
    for (const { timer } of this.running.values()) clearTimeout(timer)
    this.idle()
    if (this.json) return this.output.json({ type: 'result', ...result, ...(session && { session: session.id, sessionFile: session.file }) })
    this.endLine()
    // Tokens and cost when the provider reported usage; an unknown price says so rather than $0.
    const tokens = result.usage.inputTokens || result.usage.outputTokens ? ` · ${formatUsage(result.usage)} tokens · ${formatCost(result.cost)}` : ''
    const status = result.stopReason === 'completed' ? this.output.style('green', 'completed') : this.output.style('yellow', result.stopReason)
    // Child runs report their requests on the context under their own names: their sum is shown apart.
    const children = { usage: emptyUsage(), cost: 0 as number | undefined, runs: 0 }
    for (const [name, spent] of this.spent) {
      if (name === session?.id) continue
      children.runs++
      addUsage(children.usage, spent.usage)
      children.cost = children.cost === undefined || spent.cost === undefined ? undefined : children.cost + spent.cost
    }
    const sub = children.runs ? ` · subagents (${children.runs}): ${formatUsage(children.usage)} tokens · ${formatCost(children.cost)}` : ''
    this.output.error(
      this.output.style('dim', `${status} · ${result.turns} turn${result.turns === 1 ? '' : 's'}${tokens}${sub}${session ? ` · session ${session.id}` : ''}`),
    )
  }

  /** Stops the "waiting for the model" notice (after a failed turn). */
  idle(): void {
    clearTimeout(this.waiting)
    this.waiting = undefined
  }

  private endLine(): void {
    if (!this.atLineStart) this.output.write('\n')
    this.atLineStart = true
  }

  private print(line: string): void {
    if (!this.atLineStart) this.output.write('\n')
    this.output.line(line)
    this.atLineStart = true
  }
}

/** The argument most worth showing: a path, command or pattern, else the compact JSON. */
export function summarize(rawArguments: string): string {
  let args: unknown
  try {
    args = JSON.parse(rawArguments)
  } catch {
    return oneLine(rawArguments, 60)
  }
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    const record = args as Record<string, unknown>
    for (const key of ['command', 'pattern', 'path', 'url', 'query', 'code', 'job_id']) {
      if (typeof record[key] === 'string') return oneLine(record[key] as string, 60)
    }
    const first = Object.values(record).find((value) => typeof value === 'string')
    if (typeof first === 'string') return oneLine(first, 60)
  }
  return oneLine(JSON.stringify(args), 60)
}
