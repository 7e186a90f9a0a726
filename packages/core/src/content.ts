import type { JsonValue } from './json.js'

/** One block of model-facing content. Images are base64. */
export type ContentBlock =
  { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string } | { type: 'resource'; uri: string; mimeType?: string; text?: string }

/** Extra user-role context the agent appends after a batch of results. */
export interface HookContext {
  source: string
  text: string
}

/** A failure's description: `info` carries the class name and code of the `CordageError` thrown. */
export interface ToolFailure {
  message: string
  info?: { name: string; code: string }
}

/** Every outcome of `ctx.tools.execute`: a validated value and its rendered content, or a failure. */
export type ToolExecutionResult =
  | { isError: false; value: JsonValue; content: ContentBlock[]; meta?: JsonValue; additionalContexts?: HookContext[] }
  | { isError: true; error: ToolFailure; content: ContentBlock[]; meta?: JsonValue; additionalContexts?: HookContext[] }

/** A successful result. */
export type ToolSuccess = Extract<ToolExecutionResult, { isError: false }>

/** A failed result. */
export type ToolErrorResult = Extract<ToolExecutionResult, { isError: true }>

/** Shorthand for a single text block. */
export function text(value: string): ContentBlock[] {
  return [{ type: 'text', text: value }]
}

/** Concatenates the text blocks of `content` (other blocks are skipped). */
export function contentText(content: readonly ContentBlock[]): string {
  let out = ''
  for (const block of content) if (block.type === 'text') out += (out ? '\n' : '') + block.text
  return out
}
