import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { SessionLog, type SessionEventMap } from '@cordage/agent'
import { PostgresSessionStore } from '@cordage/plugin-store-postgres'
import { RunQueue, type RunRequest } from '@cordage/queue'
import type { PendingRequest } from '@cordage/server'
import type { SessionStore, StoredEvent } from '@cordage/services'
import { integerOption, stringOption } from '../args.js'
import type { CommandInput } from '../commands/command.js'
import { readConfig } from '../config.js'
import { CliConfigError, errorMessage, EXIT } from '../errors.js'
import { StopSignals } from '../signals.js'
import { answerWaiting, cancelWaiting } from './waiting.js'

/** A sortable run id like the session ids `cordage run` makes (`YYYYMMDD-HHMMSS-<6 hex>`). */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(3).toString('hex')}`
}

/**
 * Stores run `request.id`'s session (so it can be listed and followed at once, before any worker took it)
 * and enqueues the run. A worker finds the session with no events yet and starts it with the prompt.
 */
export async function enqueueRun(store: SessionStore, queue: RunQueue, request: RunRequest, cwd: string): Promise<string> {
  const log = SessionLog.createIn(store, { id: request.id, cwd })
  await log.ready
  return queue.enqueue(request)
}

/**
 * `cordage run --queue "<task>"`: stores the run's session, enqueues it with this cordage.yml, and follows
 * its events from PostgreSQL until it ends, wherever it runs. Ctrl-C cancels the run (a second one leaves
 * it running and exits).
 */
export async function runQueued(input: CommandInput, task: string): Promise<number> {
  const { values, output, cwd } = input
  const config = readConfig(cwd, stringOption(values, 'config'))
  if (!config?.queue) throw new CliConfigError('run --queue: cordage.yml needs queue: { redis: <redis:// url> }')
  if (!config.store?.postgres) throw new CliConfigError('run --queue: cordage.yml needs store: { postgres: <postgres:// url> } (workers store the run there)')
  const json = !!values.json
  // A person at a terminal answers the run's requests at a prompt, as in a local run.
  const interactive = !json && (input.stdin as { isTTY?: boolean }).isTTY === true && process.stderr.isTTY === true
  // With otel: configured, the run's trace starts here, at its enqueue span, and continues on the worker.
  const telemetry = config.otel ? await startQueuedTelemetry(config.otel, input.env) : undefined
  const store = new PostgresSessionStore({ url: config.store.postgres, poolSize: 2 })
  const queue = new RunQueue(config.queue)
  const id = newRunId()
  const follower = new AbortController()
  const signals = new StopSignals((signal, again) => {
    if (again) {
      output.error(`run ${id} keeps running on its worker`)
      follower.abort()
      return
    }
    output.error(output.style('yellow', `\n${signal}: cancelling run ${id} (again to stop following it)`))
    // A run waiting for its user holds no worker: it ends in the store; else its worker stops it.
    void cancelWaiting(store, queue, id)
      .then((ended) => ended || queue.cancel(id))
      .catch((error) => output.error(`cancel failed: ${errorMessage(error)}`))
  })
  try {
    await store.open()
    const cassette = stringOption(values, 'cassette')
    const maxTurns = integerOption(values, 'max-turns')
    const system = stringOption(values, 'system')
    await enqueueRun(
      store,
      queue,
      {
        id,
        prompt: task,
        ...((maxTurns !== undefined || system !== undefined) && {
          options: { ...(maxTurns !== undefined && { maxTurns }), ...(system !== undefined && { system }) },
        }),
        ...(config.file && { config: readFileSync(config.file, 'utf8') }),
        ...(cassette && { cassette: resolve(cwd, cassette) }),
      },
      cwd,
    )
    output.error(output.style('dim', `queued run ${id}`))
    let end: SessionEventMap['session/end'] | undefined
    let prompt: AbortController | undefined
    // The text as the worker streams it; each stored turn then only completes its line.
    const live = json ? undefined : new LiveText(output)
    const unfollowText = live && queue.followText(id, (text, turn) => live.write(text, turn))
    for await (const event of store.follow(id, { signal: follower.signal })) {
      if (json) output.json(event)
      else print(output, event, id, live!)
      if (event.type === 'session/end') end = event.data as SessionEventMap['session/end']
      // Answered elsewhere (the studio), or over: the prompt goes.
      if (event.type === 'session/answer' || event.type === 'session/end') prompt?.abort()
      if (event.type === 'session/waiting' && interactive) {
        prompt = new AbortController()
        void answerAtPrompt(input, (event.data as SessionEventMap['session/waiting']).request as PendingRequest, prompt.signal, (answer) =>
          answerWaiting(store, queue, id, (event.data as SessionEventMap['session/waiting']).request.id, answer),
        )
      }
    }
    prompt?.abort()
    unfollowText?.()
    live?.endLine()
    if (!end) return EXIT.failed
    if (end.reason === 'completed') return EXIT.ok
    if (end.message) output.error(output.style('red', `run ${id} ${end.reason}: ${end.message}`))
    return end.reason === 'cancelled' || end.reason === 'aborted' ? 130 : EXIT.failed
  } finally {
    signals.dispose()
    await queue.close()
    await store.close()
    await telemetry?.shutdown()
  }
}

/** Asks the user for `request` at a terminal prompt and hands the answer on; a dismissed prompt (Ctrl-C, answered elsewhere) answers nothing. */
async function answerAtPrompt(input: CommandInput, request: PendingRequest, signal: AbortSignal, answer: (value: unknown) => Promise<boolean>): Promise<void> {
  const { output } = input
  const [{ PromptQueue }, { approvalSummary }, { interrupt }] = await Promise.all([
    import('../prompts.js'),
    import('../human.js'),
    import('../commands/human-setup.js'),
  ])
  const prompts = new PromptQueue({ input: input.stdin, output: process.stderr, print: (text) => output.error(text), interrupt }, output)
  let value: unknown
  try {
    if (request.kind === 'approval')
      value = await prompts.approve(approvalSummary(output, request.tool, request.arguments, request.reason), signal, () => false)
    else if (request.kind === 'question') value = await prompts.ask(request.questions, signal)
    else value = await prompts.approvePlan(request.plan, signal)
  } catch {
    return
  }
  await answer(value).catch((error) => output.error(output.style('yellow', `the answer was not taken: ${errorMessage(error)}`)))
}

/**
 * The text a queued run streams, written to stdout as it comes, a line per turn; a stored turn whose text
 * was streamed only completes it (what the stream had not shown yet), so each turn is printed once, whole.
 */
class LiveText {
  /** Streamed turns, oldest first, until their stored turn claims them. */
  private turns: Array<{ turn: string; text: string; claimed: boolean }> = []
  private lastTurn: string | undefined
  private lineOpen = false

  constructor(private readonly output: CommandInput['output']) {}

  write(text: string, turn: string): void {
    const entry = this.turns.find((streamed) => streamed.turn === turn)
    // Its stored turn was printed whole already: a late piece of it is not shown twice.
    if (entry?.claimed) return
    if (this.lastTurn !== undefined && turn !== this.lastTurn) this.endLine()
    this.lastTurn = turn
    if (entry) entry.text += text
    else this.turns.push({ turn, text, claimed: false })
    this.output.write(text)
    this.lineOpen = !text.endsWith('\n')
  }

  /** A stored turn's text: what streaming already showed is not printed again. */
  turn(content: string): void {
    const index = this.turns.findIndex((streamed) => !streamed.claimed)
    const streamed = index < 0 ? undefined : this.turns[index]!
    // Older turns are done with; the one claimed now stays, so its late pieces are recognised.
    this.turns.splice(0, Math.max(0, index))
    if (!streamed || !(streamed.text.startsWith(content) || content.startsWith(streamed.text))) {
      if (streamed) streamed.claimed = true
      this.endLine()
      this.output.line(content)
      return
    }
    streamed.claimed = true
    const rest = content.slice(Math.min(streamed.text.length, content.length))
    if (rest) {
      this.output.write(rest)
      this.lineOpen = true
    }
    // A later turn's text may already be on a line of its own: this one's line was ended then.
    if (streamed.turn === this.lastTurn) this.endLine()
  }

  /** Ends a line the stream left open, before other output. */
  endLine(): void {
    if (!this.lineOpen) return
    this.output.write('\n')
    this.lineOpen = false
  }
}

function print(output: CommandInput['output'], event: StoredEvent, id: string, live: LiveText): void {
  // What goes to stderr starts on a line of its own.
  if (event.type === 'tool/result' || event.type === 'session/waiting' || event.type === 'session/end') live.endLine()
  if (event.type === 'assistant/message') {
    const data = event.data as SessionEventMap['assistant/message']
    if (data.content) live.turn(data.content)
    if (data.toolCalls?.length) live.endLine()
    for (const call of data.toolCalls ?? []) output.error(output.style('dim', `→ ${call.name} ${call.arguments.slice(0, 120)}`))
  } else if (event.type === 'tool/result') {
    const data = event.data as SessionEventMap['tool/result']
    output.error(data.isError ? output.style('red', `✗ ${data.name}${data.error?.code ? ` (${data.error.code})` : ''}`) : output.style('dim', `✓ ${data.name}`))
  } else if (event.type === 'session/waiting') {
    const { request } = event.data as SessionEventMap['session/waiting']
    const what = request.kind === 'approval' ? `approval of ${String(request.tool)}` : request.kind === 'plan' ? 'a plan review' : 'answers to questions'
    output.error(
      output.style(
        'yellow',
        `run waits for ${what} (request ${request.id}); no worker holds it until it is answered (at this terminal, in the studio, or with POST /api/runs/${id}/answers)`,
      ),
    )
  } else if (event.type === 'session/end') {
    const data = event.data as SessionEventMap['session/end']
    output.error(output.style('dim', `run ended: ${data.reason}`))
  }
}

/** The OpenTelemetry SDK of an enqueuer, its `otel:` section checked first as a runtime checks it. */
async function startQueuedTelemetry(settings: Record<string, unknown>, env: NodeJS.ProcessEnv) {
  const [{ configIssues }, { default: Otel }, { startTelemetry }] = await Promise.all([
    import('../plugins.js'),
    import('@cordage/plugin-otel'),
    import('../telemetry.js'),
  ])
  const issues = configIssues(Otel, settings)
  if (issues.length) throw new CliConfigError(issues.map((issue) => `cordage.yml: otel: ${issue}`).join('\n'))
  return startTelemetry(settings, env)
}
