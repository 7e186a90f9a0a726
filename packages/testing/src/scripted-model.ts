import { Context, Service } from 'cordis'
import {
  ModelRequestError,
  type CompletionRequest,
  type Message,
  type ModelEvent,
  type ModelInfo,
  type ModelPrice,
  type ModelService,
  type Usage,
} from '@cordage/services'
import type { ToolSchema } from '@cordage/registry'
import { skipShadowContexts } from '@cordage/registry/cordis-seam'

/** A tool call in a script; `arguments` may be an object (serialised) or the exact JSON text to send. */
export interface ScriptedCall {
  /** Default `call_<turn>_<index>` (1-based turn). */
  id?: string
  name: string
  arguments?: string | Record<string, unknown>
}

/** One scripted model turn. */
export interface ScriptedTurn {
  /** Streamed as one delta, or one delta per array item. */
  text?: string | string[]
  toolCalls?: ScriptedCall[]
  /** Default `tool_calls` when there are calls, else `stop`. */
  finishReason?: string
  usage?: Usage
  /** Milliseconds to wait before each streamed event (abortable). */
  delayMs?: number
  /** Throw this instead of answering (after any text). */
  error?: Error
}

/** A turn, or a function of the request that returns one (for answers that depend on tool results). */
export type ScriptStep = ScriptedTurn | ((request: RecordedRequest) => ScriptedTurn)

/** What the model received: messages and tools, deep-copied at request time. */
export interface RecordedRequest {
  messages: Message[]
  tools: ToolSchema[]
  /** `compaction` for the agent's summary requests. */
  purpose?: 'turn' | 'compaction'
}

export interface ScriptedModelConfig {
  /** Played in order to requests that match no route. */
  turns: ScriptStep[]
  /**
   * Scripts for conversations that run side by side (subagents, workflows): a request whose first user
   * message starts with a key plays that key's steps in order, whatever other conversations do meanwhile.
   */
  routes?: Record<string, ScriptStep[]>
  /** Default `scripted`. */
  id?: string
  /** Keep every request in `requests` (default true); a long benchmark turns it off so memory stays flat. */
  record?: boolean
  /**
   * A small model: reported as `info.contextWindow`, and a request larger than this many tokens
   * (characters / 4 of its messages and tools) fails `MODEL_CONTEXT_LENGTH` as a real provider would.
   */
  contextWindow?: number
  /** Reported as `info.price` (US dollars per million tokens). */
  price?: ModelPrice
  /** Answers compaction requests (`purpose: 'compaction'`) without using the script; default a one-line summary. */
  summarize?: (request: RecordedRequest) => ScriptedTurn
}

/** Raised when the agent asks for more turns than the script has. */
export class ScriptExhaustedError extends Error {
  constructor(used: number, request: RecordedRequest) {
    const last = request.messages.at(-1)
    const summary = last ? `${last.role}: ${JSON.stringify('content' in last ? last.content : last).slice(0, 200)}` : '(no messages)'
    super(`the scripted model has ${used} turn(s) but request ${used + 1} arrived; last message ${summary}`)
    this.name = 'ScriptExhaustedError'
  }
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * A `model` service that plays a list of turns: streams text deltas and tool calls as `ModelEvent`s,
 * records every request in `requests`, and fails clearly when the script runs out.
 * Load: `await ctx.plugin(ScriptedModel, { turns: [...] })`.
 */
export class ScriptedModel extends Service implements ModelService {
  readonly id: string
  readonly info?: ModelInfo
  /** Every request received, in order, deep-copied when it arrived. */
  readonly requests: RecordedRequest[] = []
  private readonly turns: ScriptStep[]
  private readonly routes: Array<{ key: string; steps: ScriptStep[]; played: number }>
  private played = 0
  private readonly record: boolean
  private received = 0
  private readonly contextWindow?: number
  private readonly summarize: (request: RecordedRequest) => ScriptedTurn

  constructor(ctx: Context, config: ScriptedModelConfig) {
    super(ctx, 'model')
    // Like the real providers: `stream` never depends on the caller's context, so calls through
    // `ctx.model` skip cordis's per-call shadow context.
    skipShadowContexts(this)
    if (!config || !Array.isArray(config.turns)) throw new TypeError('ScriptedModel needs { turns: [...] }')
    this.id = config.id ?? 'scripted'
    this.record = config.record ?? true
    this.contextWindow = config.contextWindow
    if (config.contextWindow !== undefined || config.price !== undefined) {
      this.info = {
        model: this.id,
        ...(config.contextWindow !== undefined && { contextWindow: config.contextWindow }),
        ...(config.price && { price: config.price }),
      }
    }
    this.summarize = config.summarize ?? ((request) => ({ text: `Summary of ${request.messages.length} messages.` }))
    this.turns = [...config.turns]
    // Longest key first, so a more specific prompt wins over its prefix.
    this.routes = Object.entries(config.routes ?? {})
      .map(([key, steps]) => ({ key, steps: [...steps], played: 0 }))
      .sort((a, b) => b.key.length - a.key.length)
    this.stream = this.stream.bind(this)
  }

  /** The number of unrouted turns not yet played. */
  get remaining(): number {
    return this.turns.length - this.played
  }

  async *stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    const recorded: RecordedRequest = structuredClone({ messages: request.messages, tools: request.tools })
    if (request.purpose) recorded.purpose = request.purpose
    if (this.contextWindow !== undefined) {
      const tokens = Math.ceil((JSON.stringify(request.messages).length + JSON.stringify(request.tools).length) / 4)
      if (tokens > this.contextWindow) {
        throw new ModelRequestError('MODEL_CONTEXT_LENGTH', `prompt is too long: ${tokens} tokens > ${this.contextWindow} maximum`, { status: 400 })
      }
    }
    if (this.record) this.requests.push(recorded)
    if (request.purpose === 'compaction') {
      yield* this.play(this.summarize(recorded), request.signal, 0)
      return
    }
    const index = this.received++
    const first = recorded.messages.find((message) => message.role === 'user')?.content ?? ''
    const route = this.routes.find((candidate) => first.startsWith(candidate.key))
    const script = route ? route.steps : this.turns
    const at = route ? route.played++ : this.played++
    const step = script[at]
    if (step === undefined) throw new ScriptExhaustedError(at, recorded)
    const turn = typeof step === 'function' ? step(recorded) : step
    yield* this.play(turn, request.signal, index)
  }

  private async *play(turn: ScriptedTurn, signal: AbortSignal | undefined, index: number): AsyncIterable<ModelEvent> {
    const pause = async () => {
      if (turn.delayMs) await wait(turn.delayMs, signal)
      else if (signal?.aborted) throw signal.reason
    }
    const deltas = turn.text === undefined ? [] : Array.isArray(turn.text) ? turn.text : [turn.text]
    for (const delta of deltas) {
      await pause()
      yield { type: 'text', delta }
    }
    if (turn.error) throw turn.error
    const calls = turn.toolCalls ?? []
    for (const [position, call] of calls.entries()) {
      await pause()
      const args = call.arguments === undefined ? '{}' : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
      yield { type: 'tool-call', call: { id: call.id ?? `call_${index + 1}_${position}`, name: call.name, arguments: args } }
    }
    await pause()
    const finishReason = turn.finishReason ?? (calls.length ? 'tool_calls' : 'stop')
    yield turn.usage ? { type: 'done', finishReason, usage: turn.usage } : { type: 'done', finishReason }
  }
}
