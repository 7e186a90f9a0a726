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

/**
 * One piece of the model's reasoning, kept exactly as the provider sent it so it can be sent back:
 * Anthropic `thinking` (`text` + `signature`) or `redacted_thinking` (`redacted`, opaque), DeepSeek
 * `reasoning_content` (`text` only). What the user sees is `text`; a redacted block shows nothing.
 */
export interface ThinkingBlock {
  text: string
  /** Anthropic's signature over the block; sent back byte for byte. */
  signature?: string
  /** The opaque data of an Anthropic `redacted_thinking` block. */
  redacted?: string
}

/** A conversation message in provider-neutral form. */
export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant'
      content: string
      toolCalls?: ToolCall[]
      /** The reasoning that came before the text and calls, in order (providers decide what to send back). */
      thinking?: ThinkingBlock[]
      /** The `id` of the model service that produced this turn: thinking is only sent back to the same model. */
      model?: string
    }
  | { role: 'tool'; callId: string; name: string; content: ContentBlock[]; isError: boolean }

/**
 * Token accounting of one model request. `inputTokens` counts the whole prompt, cached parts included;
 * `cacheReadTokens` and `cacheWriteTokens` are the parts of it read from and written to the provider's
 * prompt cache; `reasoningTokens` is the part of `outputTokens` spent thinking (0 when the provider does
 * not say). Providers fill every field (0 when unknown).
 */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens?: number
  cacheWriteTokens?: number
  reasoningTokens?: number
}

/** One streamed event of a completion. The stream ends with exactly one `done`. */
export type ModelEvent =
  | { type: 'text'; delta: string }
  /** A piece of reasoning text as it streams, for display only. */
  | { type: 'thinking'; delta: string }
  /** A complete reasoning block (with its signature), in the order the model produced it. */
  | { type: 'thinking-block'; block: ThinkingBlock }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'done'; finishReason: 'stop' | 'tool_calls' | 'length' | 'error' | (string & {}); usage?: Usage }

/** What the agent asks of the model for one turn. */
export interface CompletionRequest {
  messages: Message[]
  tools: ModelTool[]
  signal?: AbortSignal
  /** `compaction` when the agent asks for a summary of the conversation (no tools are offered). Default `turn`. */
  purpose?: 'turn' | 'compaction'
}

/** Prices in US dollars per million tokens. */
export interface ModelPrice {
  input: number
  output: number
  /** Default: `input`. */
  cacheRead?: number
  /** Default: `input`. */
  cacheWrite?: number
}

/** What a provider knows of the model it serves: its context window and its prices, when known. */
export interface ModelInfo {
  /** The model name as the provider's API knows it. */
  model: string
  /** Tokens the model accepts per request (prompt plus output). */
  contextWindow?: number
  /** Undefined: unknown price (costs are shown as unknown, never as 0). */
  price?: ModelPrice
}

/** The `model` service seam: streaming completion with text deltas and assembled tool calls. */
export interface ModelService {
  /** A label for logs and session headers, e.g. `openai:gpt-4o-mini`. */
  readonly id: string
  /** The model's window and prices, for compaction and cost; absent when the provider knows nothing. */
  readonly info?: ModelInfo
  stream(request: CompletionRequest): AsyncIterable<ModelEvent>
}

/**
 * One model request an agent made and what it used: emitted on the context after each request (turns and
 * compaction summaries alike), only while someone listens. `agent` is what the run's tool calls carry as
 * `exec.agent`, so per-root-run limits (a token budget) can charge it as it happens.
 */
export interface AgentUsageEvent {
  agent?: string
  /** The model service id. */
  model: string
  purpose: 'turn' | 'compaction'
  /** Absent when the provider reported none (the request still happened: it counts as a turn). */
  usage?: Usage
  /** US dollars; absent when the model's price is unknown. */
  cost?: number
}
