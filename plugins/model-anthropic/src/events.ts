import { ModelRequestError, type ModelEvent, type ToolCall, type Usage } from '@cordage/services'

interface Open {
  type: string
  text: string
  signature?: string
  data?: string
  id?: string
  name?: string
  input?: unknown
}

const FINISH: Record<string, string> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length', stop_sequence: 'stop' }

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}

/**
 * Folds Messages stream events into model events: text and thinking deltas as they arrive, each
 * thinking block (with its signature) and tool call when its block stops, and one `done` at
 * `message_stop` with usage (the cache fields included in `inputTokens`, as their own fields too).
 */
export class MessageFold {
  private readonly blocks = new Map<number, Open>()
  private stopReason: string | undefined
  private readonly raw: Record<string, number> = {}
  finished = false

  /** The model event one stream event completes, if any (never more than one, so nothing is allocated for the many that complete none). */
  push(event: any): ModelEvent | undefined {
    switch (event?.type) {
      case 'message_start':
        this.takeUsage(event.message?.usage)
        return undefined
      case 'content_block_start': {
        const block = event.content_block ?? {}
        this.blocks.set(event.index, {
          type: block.type,
          text: typeof block.text === 'string' ? block.text : typeof block.thinking === 'string' ? block.thinking : '',
          signature: block.signature || undefined,
          data: block.data,
          id: block.id,
          name: block.name,
          input: block.input,
        })
        return block.type === 'text' && block.text ? { type: 'text', delta: block.text } : undefined
      }
      case 'content_block_delta':
        return this.delta(event.index, event.delta ?? {})
      case 'content_block_stop':
        return this.stop(event.index)
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason
        this.takeUsage(event.usage)
        return undefined
      case 'message_stop':
        this.finished = true
        return { type: 'done', finishReason: FINISH[this.stopReason ?? ''] ?? this.stopReason ?? 'stop', usage: this.usage() }
      default:
        // `ping` and event types added later carry nothing the seam needs.
        return undefined
    }
  }

  private delta(index: number, delta: any): ModelEvent | undefined {
    const open = this.blocks.get(index)
    if (!open) throw new ModelRequestError('MODEL_STREAM', `the server sent a delta for content block ${index}, which was never started`)
    switch (delta.type) {
      case 'text_delta':
        open.text += delta.text
        return delta.text ? { type: 'text', delta: delta.text } : undefined
      case 'thinking_delta':
        open.text += delta.thinking
        return delta.thinking ? { type: 'thinking', delta: delta.thinking } : undefined
      case 'signature_delta':
        open.signature = (open.signature ?? '') + delta.signature
        return undefined
      case 'input_json_delta':
        open.text += delta.partial_json
        return undefined
      default:
        return undefined
    }
  }

  private stop(index: number): ModelEvent | undefined {
    const open = this.blocks.get(index)
    if (!open) return undefined
    this.blocks.delete(index)
    if (open.type === 'thinking')
      return { type: 'thinking-block', block: { text: open.text, ...(open.signature !== undefined && { signature: open.signature }) } }
    if (open.type === 'redacted_thinking') return { type: 'thinking-block', block: { text: '', redacted: String(open.data ?? '') } }
    if (open.type === 'tool_use') {
      const call: ToolCall = { id: String(open.id ?? ''), name: String(open.name ?? ''), arguments: open.text || JSON.stringify(open.input ?? {}) }
      return { type: 'tool-call', call }
    }
    return undefined
  }

  private takeUsage(usage: any): void {
    if (!usage || typeof usage !== 'object') return
    // message_delta's usage is cumulative: a field it carries replaces the one message_start gave.
    for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) {
      if (typeof usage[key] === 'number') this.raw[key] = usage[key]
    }
  }

  /** Usage in the seam's terms: `input_tokens` excludes cached parts on this API, `inputTokens` includes them. */
  usage(): Usage {
    const read = count(this.raw.cache_read_input_tokens)
    const write = count(this.raw.cache_creation_input_tokens)
    return {
      inputTokens: count(this.raw.input_tokens) + read + write,
      outputTokens: count(this.raw.output_tokens),
      cacheReadTokens: read,
      cacheWriteTokens: write,
      // Thinking is billed as output; the API does not report it apart.
      reasoningTokens: 0,
    }
  }
}
