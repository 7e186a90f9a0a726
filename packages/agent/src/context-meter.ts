import type { Message, ModelTool } from './model.js'

// A token is about four characters of English or code; providers' reported counts correct the drift.
const CHARS_PER_TOKEN = 4
// Per-message framing (role, separators) every API adds.
const MESSAGE_OVERHEAD = 4
// An image costs about this much on every vision API, whatever its bytes.
const IMAGE_TOKENS = 1_500

/** An estimate of the tokens `message` adds to a prompt (computed once per message, linear in its size). */
export function estimateTokens(message: Message): number {
  let chars = 0
  switch (message.role) {
    case 'tool':
      for (const block of message.content) {
        if (block.type === 'text') chars += block.text.length
        else if (block.type === 'image') chars += IMAGE_TOKENS * CHARS_PER_TOKEN
        else chars += (block.text ?? block.uri).length
      }
      break
    case 'assistant':
      chars = message.content.length
      for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length + 16
      for (const block of message.thinking ?? []) chars += block.text.length + (block.signature?.length ?? 0) + (block.redacted?.length ?? 0)
      break
    default:
      chars = message.content.length
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD
}

const toolTokens = new WeakMap<ModelTool, number>()

/** The tokens a tool list adds to every request (each schema measured once). */
export function estimateToolTokens(tools: readonly ModelTool[]): number {
  let sum = 0
  for (const tool of tools) {
    let tokens = toolTokens.get(tool)
    if (tokens === undefined) {
      tokens = Math.ceil((tool.name.length + tool.description.length + JSON.stringify(tool.parameters).length) / CHARS_PER_TOKEN)
      toolTokens.set(tool, tokens)
    }
    sum += tokens
  }
  return sum
}

/**
 * The size of the conversation in tokens, kept up to date as messages are added: each message is
 * measured once when it is committed, so asking for the size costs the same at turn 300 as at turn 1.
 * When the provider reports a request's real prompt size, later estimates start from it and add only
 * what was committed since.
 */
export class ContextMeter {
  /** Per-message estimates, in conversation order. */
  readonly estimates: number[] = []
  private sum = 0
  private anchor: { tokens: number; sum: number; count: number } | undefined

  constructor(messages: readonly Message[] = []) {
    for (const message of messages) this.add(message)
  }

  add(message: Message): void {
    const tokens = estimateTokens(message)
    this.estimates.push(tokens)
    this.sum += tokens
  }

  /** Starts over from `messages` (after a compaction rewrote the conversation). */
  reset(messages: readonly Message[]): void {
    this.estimates.length = 0
    this.sum = 0
    this.anchor = undefined
    for (const message of messages) this.add(message)
  }

  /** A request of the first `count` messages measured `inputTokens` (tools and framing included). */
  report(count: number, inputTokens: number): void {
    if (count !== this.estimates.length || !(inputTokens > 0)) return
    this.anchor = { tokens: inputTokens, sum: this.sum, count }
  }

  /** The estimated prompt size of the next request with `toolTokens` of tools. */
  estimate(toolTokens: number): number {
    const anchor = this.anchor
    if (anchor && anchor.count <= this.estimates.length) return anchor.tokens + (this.sum - anchor.sum)
    return this.sum + toolTokens
  }
}
