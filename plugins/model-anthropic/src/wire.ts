import type { ContentBlock } from '@cordage/core'
import type { CompletionRequest, Message, ThinkingBlock } from '@cordage/services'

type Block = Record<string, unknown>
interface WireMessage {
  role: 'user' | 'assistant'
  content: Block[]
}

/** The request options that are not messages or tools. */
export interface WireOptions {
  model: string
  /** The model service id: thinking recorded by another model is not sent back. */
  id: string
  maxTokens: number
  thinking: 'default' | 'adaptive' | 'off' | number
  cache: boolean
  temperature?: number
  extraBody: Record<string, unknown>
}

const EPHEMERAL = { type: 'ephemeral' } as const

function resultBlocks(content: readonly ContentBlock[]): Block[] {
  const blocks: Block[] = []
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text) blocks.push({ type: 'text', text: block.text })
    } else if (block.type === 'image') {
      blocks.push({ type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } })
    } else {
      blocks.push({ type: 'text', text: block.text ?? `[resource ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]` })
    }
  }
  return blocks
}

/** Thinking blocks as Anthropic takes them back: signed ones verbatim, redacted ones as their data; unsigned reasoning (another provider's) is dropped. */
function thinkingBlocks(thinking: readonly ThinkingBlock[] | undefined): Block[] {
  const blocks: Block[] = []
  for (const block of thinking ?? []) {
    if (block.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: block.redacted })
    else if (block.signature !== undefined) blocks.push({ type: 'thinking', thinking: block.text, signature: block.signature })
  }
  return blocks
}

function toolInput(text: string): unknown {
  try {
    const value = JSON.parse(text)
    if (value && typeof value === 'object' && !Array.isArray(value)) return value
  } catch {}
  // The agent already answered an unparseable call with INVALID_ARGS; the wire needs an object.
  return {}
}

function push(out: WireMessage[], role: WireMessage['role'], blocks: Block[]): void {
  if (!blocks.length) return
  const last = out.at(-1)
  // Consecutive same-role messages are one message on this wire (tool results and a context notice share a user turn).
  if (last?.role === role) last.content.push(...blocks)
  else out.push({ role, content: blocks })
}

/**
 * Maps provider-neutral messages to Messages API `system` and `messages`. Thinking is sent back as it
 * came, in its assistant turn, for turns this same model produced (the API requires it in the turn whose
 * tool calls are being answered and ignores it elsewhere; sending it unchanged keeps the prefix, and so
 * the prompt cache, stable); a turn from another model has its thinking dropped.
 */
export function toWireMessages(messages: readonly Message[], id: string): { system: Block[]; messages: WireMessage[] } {
  const system: Block[] = []
  const out: WireMessage[] = []
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (message.content) system.push({ type: 'text', text: message.content })
        break
      case 'user':
        push(out, 'user', message.content ? [{ type: 'text', text: message.content }] : [])
        break
      case 'assistant': {
        const blocks = message.model === undefined || message.model === id ? thinkingBlocks(message.thinking) : []
        if (message.content) blocks.push({ type: 'text', text: message.content })
        for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call.arguments) })
        push(out, 'assistant', blocks)
        break
      }
      case 'tool': {
        const content = resultBlocks(message.content)
        push(out, 'user', [
          { type: 'tool_result', tool_use_id: message.callId, ...(content.length && { content }), ...(message.isError && { is_error: true }) },
        ])
        break
      }
    }
  }
  return { system, messages: out }
}

function markLast(blocks: Block[] | undefined): void {
  const last = blocks?.at(-1)
  // Thinking blocks cannot carry a breakpoint; the prefix through them is cached by the next one.
  if (last && last.type !== 'thinking' && last.type !== 'redacted_thinking') last.cache_control = EPHEMERAL
}

/**
 * The body of a streaming Messages request. With `cache`, up to four `cache_control` breakpoints: the last
 * tool, the last system block, the last block of the conversation and the last block of the user turn
 * before it (so a turn that adds more than the API's 20-block lookback still finds the previous prefix).
 */
export function toWireBody(request: CompletionRequest, options: WireOptions): Record<string, unknown> {
  const { system, messages } = toWireMessages(request.messages, options.id)
  const body: Record<string, unknown> = { ...options.extraBody, model: options.model, max_tokens: options.maxTokens, messages, stream: true }
  if (system.length) body.system = system
  const tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }) as Block)
  if (tools.length) body.tools = tools
  if (options.thinking === 'adaptive') body.thinking = { type: 'adaptive' }
  else if (options.thinking === 'off') body.thinking = { type: 'disabled' }
  else if (typeof options.thinking === 'number') body.thinking = { type: 'enabled', budget_tokens: options.thinking }
  if (options.temperature !== undefined) body.temperature = options.temperature
  if (options.cache) {
    markLast(tools)
    markLast(system)
    markLast(messages.at(-1)?.content)
    const previousUser = messages.findLast((message, index) => message.role === 'user' && index < messages.length - 2)
    markLast(previousUser?.content)
  }
  return body
}
