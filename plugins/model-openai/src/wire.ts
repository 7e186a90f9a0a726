import type { ContentBlock } from '@cordage/core'
import type { CompletionRequest, Message } from '@cordage/services'

/** How image blocks in tool results reach the model: dropped with a note, or attached as a user message. */
export type ImageMode = 'omit' | 'attach'

/** The request options that are not messages or tools. */
export interface WireOptions {
  model: string
  /** The model service id: reasoning recorded by another model is not sent back. */
  id: string
  /** Whether `reasoning_content` goes back on assistant turns with tool calls (see `reasoningContentOf`). */
  reasoningContent: 'auto' | 'always' | 'never'
  /** The endpoint is DeepSeek's, whose thinking mode requires `reasoning_content` back. */
  deepseek?: boolean
  stream: boolean
  includeUsage: boolean
  images: ImageMode
  temperature?: number
  topP?: number
  maxTokens?: number
  seed?: number
  stop?: string[]
  parallelToolCalls?: boolean
  extraBody?: Record<string, unknown>
}

type WirePart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } }

/** The text of a block for a text-only channel; images become a note saying what was left out. */
function blockText(block: ContentBlock): string {
  if (block.type === 'text') return block.text
  if (block.type === 'resource') return block.text === undefined ? `[resource ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]` : block.text
  return `[${block.mimeType} image omitted: this model connection does not send images]`
}

type Assistant = Extract<Message, { role: 'assistant' }>

type ReasoningOptions = Pick<WireOptions, 'id' | 'reasoningContent' | 'deepseek'>

/** This model's own reasoning on a turn (unsigned blocks: signed ones are Anthropic's). */
function ownReasoning(message: Assistant, id: string): string[] | undefined {
  if (message.model !== id) return undefined
  const blocks = (message.thinking ?? []).filter((block) => block.signature === undefined && block.redacted === undefined)
  return blocks.length ? blocks.map((block) => block.text) : undefined
}

/**
 * Whether assistant turns with tool calls carry `reasoning_content` back. DeepSeek's thinking mode rejects
 * a request whose tool-call turns lack it ("" when there was none) and ignores it on turns without calls,
 * where it is never sent. `auto`: for DeepSeek's endpoint, and for any conversation in which this model
 * returned reasoning (a proxy or a self-hosted reasoning model).
 */
export function sendsReasoning(messages: readonly Message[], options: ReasoningOptions): boolean {
  if (options.reasoningContent !== 'auto') return options.reasoningContent === 'always'
  return !!options.deepseek || messages.some((message) => message.role === 'assistant' && ownReasoning(message, options.id) !== undefined)
}

/** Maps provider-neutral messages to Chat Completions messages. */
export function toWireMessages(messages: readonly Message[], images: ImageMode, reasoning?: ReasoningOptions): object[] {
  const withReasoning = reasoning !== undefined && sendsReasoning(messages, reasoning)
  const out: object[] = []
  let pendingImages: WirePart[] = []
  const flushImages = () => {
    if (pendingImages.length) out.push({ role: 'user', content: pendingImages })
    pendingImages = []
  }
  for (const message of messages) {
    if (message.role !== 'tool') flushImages()
    switch (message.role) {
      case 'system':
      case 'user':
        out.push({ role: message.role, content: message.content })
        break
      case 'assistant': {
        // Reasoning another model produced is not this model's: it goes back as "".
        const reasoningContent = withReasoning && message.toolCalls?.length ? (ownReasoning(message, reasoning!.id) ?? []).join('') : undefined
        out.push(
          message.toolCalls?.length
            ? {
                role: 'assistant',
                content: message.content || null,
                ...(reasoningContent !== undefined && { reasoning_content: reasoningContent }),
                tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })),
              }
            : { role: 'assistant', content: message.content },
        )
        break
      }
      case 'tool': {
        const texts: string[] = []
        for (const block of message.content) {
          if (block.type === 'image' && images === 'attach') {
            pendingImages.push({ type: 'text', text: `Image from tool ${message.name} (call ${message.callId}):` })
            pendingImages.push({ type: 'image_url', image_url: { url: `data:${block.mimeType};base64,${block.data}` } })
            texts.push(`[${block.mimeType} image attached in the next user message]`)
          } else {
            texts.push(blockText(block))
          }
        }
        // Tool messages carry no error flag on this wire: the rendered failure text is what the model reads.
        out.push({ role: 'tool', tool_call_id: message.callId, content: texts.join('\n') })
        break
      }
    }
  }
  flushImages()
  return out
}

/** The JSON body of a Chat Completions request. */
export function toWireBody(request: CompletionRequest, options: WireOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { ...options.extraBody, model: options.model, messages: toWireMessages(request.messages, options.images, options) }
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }))
    if (options.parallelToolCalls !== undefined) body.parallel_tool_calls = options.parallelToolCalls
  }
  if (options.stream) {
    body.stream = true
    if (options.includeUsage) body.stream_options = { include_usage: true }
  }
  if (options.temperature !== undefined) body.temperature = options.temperature
  if (options.topP !== undefined) body.top_p = options.topP
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens
  if (options.seed !== undefined) body.seed = options.seed
  if (options.stop?.length) body.stop = options.stop
  return body
}
