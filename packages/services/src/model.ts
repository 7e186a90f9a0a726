import type { ContentBlock, JsonSchemaNode } from '@cordage/core'

/** A tool as offered to the model: what `ctx.tools.list()` describes for it. */
export interface ModelTool {
  name: string
  description: string
  parameters: JsonSchemaNode
  outputSchema: JsonSchemaNode
}

/** A tool call the model proposed; `arguments` is the raw JSON text the model produced. */
export interface ToolCall {
  id: string
  name: string
  arguments: string
}

/** A conversation message in provider-neutral form. */
export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  | { role: 'tool'; callId: string; name: string; content: ContentBlock[]; isError: boolean }

/** Token accounting reported by a provider. */
export interface Usage {
  inputTokens: number
  outputTokens: number
}

/** One streamed event of a completion. The stream ends with exactly one `done`. */
export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'done'; finishReason: 'stop' | 'tool_calls' | 'length' | 'error' | (string & {}); usage?: Usage }

/** What the agent asks of the model for one turn. */
export interface CompletionRequest {
  messages: Message[]
  tools: ModelTool[]
  signal?: AbortSignal
}

/** The `model` service seam: streaming completion with text deltas and assembled tool calls. */
export interface ModelService {
  /** A label for logs and session headers, e.g. `openai:gpt-4o-mini`. */
  readonly id: string
  stream(request: CompletionRequest): AsyncIterable<ModelEvent>
}
