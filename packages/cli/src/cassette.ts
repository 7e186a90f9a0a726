import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { CompletionRequest, ModelEvent, ModelInfo, ModelService, ThinkingBlock, ToolCall, Usage } from '@cordage/agent'
import type { Context } from 'cordis'
import { CliError, errorMessage } from './errors.js'

/** One recorded model turn: streamed text, then the tool calls the model proposed. */
export interface CassetteTurn {
  /** Reasoning blocks, replayed before the text (signatures kept, so a replay sends them back as recorded). */
  thinking?: ThinkingBlock[]
  text?: string
  /** `arguments` is the raw JSON text the model produced (an object is accepted and stringified). */
  toolCalls?: Array<{ id?: string; name: string; arguments: string | Record<string, unknown> }>
  finishReason?: string
  usage?: Usage
}

/** A recorded script of model turns, replayed in order with no network. */
export interface Cassette {
  version: 1
  /** The model the turns were recorded from, for the record. */
  model?: string
  turns: CassetteTurn[]
}

/** Validates a parsed cassette document; errors name the turn and field. */
export function parseCassette(document: unknown, source = 'cassette'): Cassette {
  const fail = (message: string): never => {
    throw new CliError(`${source}: ${message}`)
  }
  if (!document || typeof document !== 'object' || !Array.isArray((document as Cassette).turns)) fail('expected { "version": 1, "turns": [...] }')
  const cassette = document as Cassette
  if (cassette.version !== 1) fail(`version: expected 1 but got ${JSON.stringify(cassette.version)}`)
  cassette.turns.forEach((turn, index) => {
    if (!turn || typeof turn !== 'object') fail(`turns[${index}]: expected an object`)
    if (turn.text !== undefined && typeof turn.text !== 'string') fail(`turns[${index}].text: expected string`)
    if (turn.toolCalls !== undefined && !Array.isArray(turn.toolCalls)) fail(`turns[${index}].toolCalls: expected a list`)
    turn.toolCalls?.forEach((call, position) => {
      if (!call || typeof call.name !== 'string') fail(`turns[${index}].toolCalls[${position}].name: expected string`)
      if (typeof call.arguments !== 'string' && (typeof call.arguments !== 'object' || call.arguments === null)) {
        fail(`turns[${index}].toolCalls[${position}].arguments: expected a JSON text or an object`)
      }
    })
  })
  return cassette
}

/** Reads and validates a cassette file. */
export function loadCassette(file: string): Cassette {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new CliError(`cannot read cassette ${file}: ${errorMessage(error)}`)
  }
  try {
    return parseCassette(JSON.parse(text), file)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`${file}: not valid JSON: ${errorMessage(error)}`)
  }
}

/** Options of the replaying model. */
export interface CassetteModelOptions {
  /** Text is streamed in chunks of this many characters (default 24). */
  chunkSize?: number
  /** Pause between streamed chunks, to make replays watchable (default 0). */
  delayMs?: number
}

/** A `model` service that replays a cassette: each `stream` call plays the next turn. */
export class CassetteModel implements ModelService {
  readonly id: string
  private next = 0

  constructor(
    readonly cassette: Cassette,
    private readonly options: CassetteModelOptions = {},
  ) {
    this.id = `cassette:${cassette.model ?? 'recorded'}`
  }

  /** How many turns have not been played yet. */
  get remaining(): number {
    return this.cassette.turns.length - this.next
  }

  async *stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    const index = this.next
    const turn = this.cassette.turns[index]
    if (!turn) throw new CliError(`the cassette has no turn ${index + 1} (it holds ${this.cassette.turns.length}); record a longer one with --record`, 1)
    this.next++
    const chunkSize = Math.max(1, this.options.chunkSize ?? 24)
    for (const block of turn.thinking ?? []) {
      request.signal?.throwIfAborted()
      if (block.text) yield { type: 'thinking', delta: block.text }
      yield { type: 'thinking-block', block }
    }
    const text = turn.text ?? ''
    for (let offset = 0; offset < text.length; offset += chunkSize) {
      request.signal?.throwIfAborted()
      if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs))
      yield { type: 'text', delta: text.slice(offset, offset + chunkSize) }
    }
    const calls = turn.toolCalls ?? []
    for (const [position, call] of calls.entries()) {
      request.signal?.throwIfAborted()
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
      yield { type: 'tool-call', call: { id: call.id ?? `call_${index + 1}_${position + 1}`, name: call.name, arguments: args } }
    }
    yield { type: 'done', finishReason: turn.finishReason ?? (calls.length ? 'tool_calls' : 'stop'), ...(turn.usage && { usage: turn.usage }) }
  }
}

/** Wraps a real `model` service and records each completed turn; `save()` writes the cassette. */
export class RecordingModel implements ModelService {
  readonly id: string
  readonly info: ModelInfo | undefined
  readonly turns: CassetteTurn[] = []

  constructor(
    private readonly inner: ModelService,
    readonly file: string,
  ) {
    this.id = inner.id
    this.info = inner.info
  }

  async *stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    let text = ''
    const toolCalls: ToolCall[] = []
    const thinking: ThinkingBlock[] = []
    for await (const event of this.inner.stream(request)) {
      if (event.type === 'text') text += event.delta
      else if (event.type === 'thinking-block') thinking.push({ ...event.block })
      else if (event.type === 'tool-call') toolCalls.push({ ...event.call })
      else if (event.type === 'done') {
        this.turns.push({
          ...(thinking.length && { thinking }),
          ...(text && { text }),
          ...(toolCalls.length && { toolCalls }),
          finishReason: event.finishReason,
          ...(event.usage && { usage: event.usage }),
        })
        this.save()
      }
      yield event
    }
  }

  /** Writes the turns recorded so far (atomically: a temp file, then rename). */
  save(): void {
    const cassette: Cassette = { version: 1, model: this.inner.id, turns: this.turns }
    mkdirSync(dirname(this.file), { recursive: true })
    const temp = `${this.file}.${process.pid}.tmp`
    writeFileSync(temp, JSON.stringify(cassette, null, 2) + '\n')
    renameSync(temp, this.file)
  }
}

/** A Cordis plugin providing `model` as a cassette replay: `ctx.plugin(cassettePlugin, { file })`. */
export const cassettePlugin = {
  name: 'cassette-model',
  apply(ctx: Context, config: { file?: string; cassette?: Cassette } & CassetteModelOptions) {
    const cassette = config.cassette ?? (config.file ? loadCassette(config.file) : undefined)
    if (!cassette) throw new CliError('cassette-model: give either file or cassette')
    ctx.provide('model', new CassetteModel(cassette, config))
  },
}
