import type { FakeReply } from './fake-openai.js'

/** The usage object of a reply: OpenAI's cache and reasoning details, or DeepSeek's hit/miss split. */
export function usageOf(reply: FakeReply, requestBytes: number, cachedTokens: number, deepseek: boolean): Record<string, unknown> {
  const produced = (reply.text ?? '').length + (reply.toolCalls ?? []).reduce((sum, call) => sum + JSON.stringify(call).length, 0)
  const reasoning = Math.ceil((reply.reasoning ?? '').length / 4)
  if (reply.usage) return { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens }
  const prompt = Math.ceil(requestBytes / 4)
  const cached = Math.min(prompt, cachedTokens)
  const completion = Math.ceil(produced / 4) + reasoning
  const usage: Record<string, unknown> = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  if (deepseek) Object.assign(usage, { prompt_cache_hit_tokens: cached, prompt_cache_miss_tokens: prompt - cached })
  else usage.prompt_tokens_details = { cached_tokens: cached }
  usage.completion_tokens_details = { reasoning_tokens: reasoning }
  return usage
}

/**
 * Automatic prefix caching as OpenAI and DeepSeek do it: a request reuses the longest prefix (tools,
 * then messages, in order) it shares with an earlier one, in tokens estimated as characters / 4.
 */
export class PrefixCache {
  /** Every request's text so far, in sorted order. */
  private readonly seen: string[] = []

  cached(body: any): number {
    const text = JSON.stringify(body.tools ?? []) + (body.messages ?? []).map((message: unknown) => JSON.stringify(message)).join('')
    // The longest prefix `text` shares with any earlier text is the one it shares with a neighbour in sorted
    // order: two comparisons per request, not one per earlier request (a long-lived server slowed as it served).
    let low = 0
    let high = this.seen.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (this.seen[middle]! < text) low = middle + 1
      else high = middle
    }
    const best = Math.max(low > 0 ? sharedPrefix(this.seen[low - 1]!, text) : 0, low < this.seen.length ? sharedPrefix(this.seen[low]!, text) : 0)
    this.seen.splice(low, 0, text)
    return Math.floor(best / 4)
  }
}

function sharedPrefix(a: string, b: string): number {
  const limit = Math.min(a.length, b.length)
  let shared = 0
  while (shared < limit && a.charCodeAt(shared) === b.charCodeAt(shared)) shared++
  return shared
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool'])

/** The wire-format rules the real service enforces with a 400; returns the first one broken. */
export function checkChatRequest(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'the request body must be a JSON object'
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter'
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' must be a non-empty array"
  for (const [index, tool] of (body.tools ?? []).entries()) {
    if (tool?.type !== 'function' || typeof tool.function?.name !== 'string')
      return `tools[${index}] must be { type: 'function', function: { name, parameters } }`
  }
  const open = new Set<string>()
  for (const [index, message] of body.messages.entries()) {
    if (!ROLES.has(message?.role)) return `messages[${index}].role must be one of ${[...ROLES].join(', ')}`
    if (message.role !== 'tool' && open.size)
      return `messages[${index}]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing ${[...open].join(', ')})`
    if (message.role === 'tool') {
      if (!open.delete(message.tool_call_id))
        return `messages[${index}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (unknown tool_call_id ${JSON.stringify(message.tool_call_id)})`
      if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `messages[${index}].content must be a string or an array of text parts`
    }
    for (const call of message.role === 'assistant' ? (message.tool_calls ?? []) : []) {
      if (call?.type !== 'function' || typeof call.id !== 'string' || typeof call.function?.name !== 'string' || typeof call.function?.arguments !== 'string') {
        return `messages[${index}].tool_calls entries must be { id, type: 'function', function: { name, arguments: string } }`
      }
      open.add(call.id)
    }
  }
  return undefined
}

/** DeepSeek's thinking-mode rule: every assistant turn with tool calls carries its `reasoning_content` back. */
export function checkReasoningContent(body: any): string | undefined {
  for (const message of body.messages) {
    if (message.role === 'assistant' && message.tool_calls?.length && typeof message.reasoning_content !== 'string') {
      return 'The `reasoning_content` in the thinking mode must be passed back to the API.'
    }
  }
  return undefined
}
