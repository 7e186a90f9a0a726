import { createHash, createHmac } from 'node:crypto'

/** `[status, error type]` of the API's HTTP errors. */
export const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

/** Signs thinking the way the fake checks it back: a block altered by a byte no longer verifies. */
export function signThinking(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('base64')
}

const tokens = (text: string) => Math.ceil(text.length / 4)

function blocksOf(content: unknown): any[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []
}

/**
 * The wire rules the real API enforces with a 400, in the words it uses; returns the first one broken.
 * `issued` holds the redacted-thinking data this server handed out; `secret` signs thinking.
 */
export function checkMessagesRequest(body: any, secret: string, issued: Set<string>, alwaysThinks: boolean): string | undefined {
  if (typeof body !== 'object' || body === null) return 'the request body must be a JSON object'
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required'
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required'
  if (!Array.isArray(body.messages) || !body.messages.length) return 'messages: at least one message is required'
  const thinking = body.thinking?.type
  if (thinking === 'enabled') {
    const budget = body.thinking.budget_tokens
    if (!Number.isInteger(budget) || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
    if (budget >= body.max_tokens) return '`max_tokens` must be greater than `thinking.budget_tokens`'
  }
  let breakpoints = 0
  const count = (block: any) => {
    if (block?.cache_control) breakpoints++
  }
  for (const tool of body.tools ?? []) count(tool)
  for (const block of blocksOf(body.system)) count(block)
  let pending: string[] = []
  for (const [index, message] of body.messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`
    const blocks = blocksOf(message.content)
    blocks.forEach(count)
    if (pending.length) {
      const answered = new Set(blocks.filter((block) => block?.type === 'tool_result').map((block) => block.tool_use_id))
      const missing = pending.filter((id) => !answered.has(id))
      if (message.role !== 'user' || missing.length) {
        return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ') || pending.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      }
    }
    const previous = new Set(pending)
    pending = []
    for (const [position, block] of blocks.entries()) {
      if (block?.type === 'tool_result' && !previous.has(block.tool_use_id)) {
        return `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
      }
      if (block?.type === 'tool_use') pending.push(block.id)
      if (block?.type === 'thinking' && block.signature !== signThinking(secret, String(block.thinking))) {
        return `messages.${index}.content.${position}: Invalid \`signature\` in \`thinking\` block`
      }
      if (block?.type === 'redacted_thinking' && !issued.has(block.data))
        return `messages.${index}.content.${position}: Invalid \`data\` in \`redacted_thinking\` block`
      if (message.role === 'user' && (block?.type === 'thinking' || block?.type === 'redacted_thinking')) {
        return `messages.${index}.content.${position}: thinking blocks may only appear in assistant messages`
      }
    }
  }
  if (breakpoints > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${breakpoints}.`
  // With thinking on, the assistant turn whose tool calls are being answered must start with its thinking.
  const last = body.messages.length - 1
  const thinks = alwaysThinks ? thinking !== 'disabled' : thinking === 'enabled' || thinking === 'adaptive'
  if (thinks && body.messages[last]?.role === 'user' && last > 0) {
    const assistant = blocksOf(body.messages[last - 1]?.content)
    const first = assistant[0]?.type
    if (assistant.some((block) => block?.type === 'tool_use') && first !== 'thinking' && first !== 'redacted_thinking') {
      return `messages.${last - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`
    }
  }
  return undefined
}

/** What one request read from and wrote to the simulated prompt cache, and its total prompt tokens. */
export interface CacheOutcome {
  total: number
  read: number
  write: number
}

/**
 * A prompt cache as the API describes it: the prefix runs tools → system → messages; each block with
 * `cache_control` is a breakpoint that writes the prefix through it, and a request reads the longest
 * prefix it shares with a cached one, looking back at most 20 blocks from each breakpoint.
 */
export class PromptCache {
  private readonly cached = new Map<string, number>()

  constructor(private readonly minTokens = 0) {}

  /** The request's cache outcome; with `store: false`, only measured (nothing is written). */
  apply(body: any, store = true): CacheOutcome {
    const segments: Array<{ text: string; breakpoint: boolean }> = []
    for (const tool of body.tools ?? []) segments.push(segment('tool', tool))
    for (const block of blocksOf(body.system)) segments.push(segment('system', block))
    for (const message of body.messages ?? []) for (const block of blocksOf(message.content)) segments.push(segment(message.role, block))
    const hashes: string[] = []
    const through: number[] = []
    let hash = ''
    let sum = 0
    for (const { text } of segments) {
      hash = createHash('sha256').update(hash).update(text).digest('hex')
      sum += tokens(text)
      hashes.push(hash)
      through.push(sum)
    }
    let read = 0
    let lastBreakpoint = -1
    segments.forEach(({ breakpoint }, index) => {
      if (!breakpoint) return
      lastBreakpoint = index
      for (let back = index; back >= Math.max(0, index - 20); back--) {
        if (this.cached.has(hashes[back])) {
          read = Math.max(read, through[back])
          break
        }
      }
    })
    let write = 0
    if (store && lastBreakpoint >= 0 && through[lastBreakpoint] >= this.minTokens) {
      write = Math.max(0, through[lastBreakpoint] - read)
      segments.forEach(({ breakpoint }, index) => {
        if (breakpoint) this.cached.set(hashes[index], through[index])
      })
    }
    return { total: sum, read, write }
  }
}

function segment(role: string, block: any): { text: string; breakpoint: boolean } {
  const { cache_control: control, ...rest } = block ?? {}
  return { text: `${role}:${JSON.stringify(rest)}`, breakpoint: control !== undefined }
}
