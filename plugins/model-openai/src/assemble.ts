import type { ModelEvent, ToolCall, Usage } from '@cordage/services'
import { ModelRequestError } from './errors.js'

interface Slot {
  id: string
  name: string
  arguments: string
}

/**
 * Usage in the seam's terms: `prompt_tokens` includes cached input on this wire; cache hits are OpenAI's
 * `prompt_tokens_details.cached_tokens` or DeepSeek's `prompt_cache_hit_tokens`; neither reports writes.
 */
function usageOf(raw: any): Usage | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  return {
    inputTokens: Number(raw.prompt_tokens) || 0,
    outputTokens: Number(raw.completion_tokens) || 0,
    cacheReadTokens: Number(raw.prompt_cache_hit_tokens ?? raw.prompt_tokens_details?.cached_tokens) || 0,
    cacheWriteTokens: 0,
    reasoningTokens: Number(raw.completion_tokens_details?.reasoning_tokens) || 0,
  }
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value
  return value === undefined || value === null ? '' : JSON.stringify(value)
}

function serverError(error: any): ModelRequestError {
  const message = typeof error?.message === 'string' ? error.message : JSON.stringify(error)
  return new ModelRequestError('MODEL_STREAM', `the server reported an error mid-stream: ${message}`)
}

/**
 * Folds `chat.completion.chunk` objects into model events: text deltas as they arrive, tool calls assembled
 * from their deltas (keyed by `index`, or by `id` for servers that omit it) and emitted in index order at
 * the end, then one `done`.
 */
export class ChunkAssembler {
  private readonly slots: Slot[] = []
  private readonly byIndex = new Map<number, Slot>()
  finishReason: string | undefined
  usage: Usage | undefined
  /** All `reasoning_content` so far (DeepSeek's thinking), and whether the server sent the field at all. */
  reasoning = ''
  private reasoned = false
  /** Reasoning that arrived since the last `takeReasoning()`. */
  private reasoningDelta = ''

  /** The reasoning text pushed since the last call ('' when none). */
  takeReasoning(): string {
    const delta = this.reasoningDelta
    this.reasoningDelta = ''
    return delta
  }

  /** Applies one parsed chunk; returns the text delta it carried ('' when none). */
  push(chunk: any): string {
    if (typeof chunk !== 'object' || chunk === null)
      throw new ModelRequestError('MODEL_STREAM', `the server sent a stream chunk that is not an object: ${JSON.stringify(chunk)}`)
    if (chunk.error) throw serverError(chunk.error)
    if (chunk.usage) this.usage = usageOf(chunk.usage)
    const choice = chunk.choices?.[0]
    if (!choice) return ''
    if (choice.finish_reason) this.finishReason = choice.finish_reason
    const delta = choice.delta
    if (!delta) return ''
    if (typeof delta.reasoning_content === 'string') {
      this.reasoned = true
      this.reasoning += delta.reasoning_content
      this.reasoningDelta += delta.reasoning_content
    }
    if (Array.isArray(delta.tool_calls)) for (const part of delta.tool_calls) this.toolDelta(part)
    return typeof delta.content === 'string' ? delta.content : ''
  }

  private toolDelta(part: any): void {
    let slot = typeof part.index === 'number' ? this.byIndex.get(part.index) : undefined
    if (!slot && part.index === undefined) {
      // Without an index: the call with this id, else the last call unless a different name starts a new one.
      const last = this.slots.at(-1)
      const name = part.function?.name
      slot = part.id ? this.slots.find((candidate) => candidate.id === part.id) : last && !(name && last.name && name !== last.name) ? last : undefined
    }
    if (!slot) {
      slot = { id: '', name: '', arguments: '' }
      this.slots.push(slot)
      this.byIndex.set(typeof part.index === 'number' ? part.index : this.slots.length - 1, slot)
    }
    if (typeof part.id === 'string' && part.id) slot.id = part.id
    const fn = part.function ?? {}
    if (typeof fn.name === 'string' && fn.name && fn.name !== slot.name) slot.name += fn.name
    slot.arguments += argumentsText(fn.arguments)
  }

  /** The assembled tool calls (ids synthesised when a server sends none; empty arguments become `{}`). */
  calls(): ToolCall[] {
    const ordered = [...this.byIndex.entries()].sort(([a], [b]) => a - b).map(([, slot]) => slot)
    return ordered.map((slot, position) => {
      if (!slot.name) throw new ModelRequestError('MODEL_STREAM', `the server streamed a tool call without a function name (position ${position})`)
      return {
        id: slot.id || `call_${position}_${Math.random().toString(36).slice(2, 10)}`,
        name: slot.name,
        arguments: slot.arguments.trim() ? slot.arguments : '{}',
      }
    })
  }

  /** The closing events: the reasoning as one block (when the server sent any), each tool call, then `done`. */
  finish(): ModelEvent[] {
    const calls = this.calls()
    const events: ModelEvent[] = this.reasoned ? [{ type: 'thinking-block', block: { text: this.reasoning } }] : []
    for (const call of calls) events.push({ type: 'tool-call', call })
    const finishReason = this.finishReason ?? (calls.length ? 'tool_calls' : 'stop')
    events.push(this.usage ? { type: 'done', finishReason, usage: this.usage } : { type: 'done', finishReason })
    return events
  }
}

/** Converts a non-streaming `chat.completion` body into the same events a stream would give. */
export function completionEvents(body: any): ModelEvent[] {
  if (body?.error) throw serverError(body.error)
  const choice = body?.choices?.[0]
  if (!choice?.message) throw new ModelRequestError('MODEL_STREAM', `the server answered without choices[0].message: ${JSON.stringify(body).slice(0, 200)}`)
  const assembler = new ChunkAssembler()
  assembler.push({
    usage: body.usage,
    choices: [
      {
        finish_reason: choice.finish_reason,
        delta: {
          ...(typeof choice.message.reasoning_content === 'string' && { reasoning_content: choice.message.reasoning_content }),
          tool_calls: (choice.message.tool_calls ?? []).map((call: any, index: number) => ({ index, ...call })),
        },
      },
    ],
  })
  const text = typeof choice.message.content === 'string' ? choice.message.content : ''
  const reasoning = assembler.takeReasoning()
  const events: ModelEvent[] = reasoning ? [{ type: 'thinking', delta: reasoning }] : []
  if (text) events.push({ type: 'text', delta: text })
  return events.concat(assembler.finish())
}
