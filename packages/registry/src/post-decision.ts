import {
  ToolDeniedError,
  ToolOutputError,
  errorMessage,
  failure,
  freezeResult,
  type ContentBlock,
  type ToolDefinition,
  type ToolExec,
  type ToolExecutionResult,
} from '@cordage/core'
import { describe, normalize, toContent, toContexts } from './normalize.js'
import type { PostDecision } from './types.js'

// The post-execute rules and the presentation rule, as pure functions from (result, answer) to the
// next frozen result.

/** A failed post-execute waterfall withholds the result: policy fails closed. */
export function postFailure(error: unknown, result: ToolExecutionResult): ToolExecutionResult {
  return failure(new ToolDeniedError(`a post-execute policy failed, so the result was withheld: ${errorMessage(error)}`), undefined, result.additionalContexts)
}

/**
 * Applies a post-execute decision: `accept` with `content` replaces presentation only, with `value`
 * replaces the value (revalidated and re-rendered under `definition`); `block` turns the result into a
 * `DENIED` failure showing its feedback. Contexts accumulate in order.
 */
export function applyPostDecision(
  definition: ToolDefinition,
  exec: ToolExec,
  result: ToolExecutionResult,
  decision: PostDecision | undefined,
): ToolExecutionResult {
  let contexts = result.additionalContexts
  try {
    if (decision?.additionalContexts !== undefined) contexts = [...(contexts ?? []), ...toContexts(decision.additionalContexts, 'a post-execute listener')]
  } catch (error) {
    return failure(error, undefined, contexts)
  }
  if (decision?.kind === 'block') {
    const feedback = decision.feedback
    let content: ContentBlock[]
    try {
      content = toContent(typeof feedback === 'string' ? [{ type: 'text', text: feedback }] : feedback, 'a post-execute block')
    } catch (error) {
      return failure(error, undefined, contexts)
    }
    const message = typeof feedback === 'string' ? feedback : content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') || 'blocked by policy'
    return failure(new ToolDeniedError(message), content, contexts)
  }
  if (decision?.kind !== 'accept')
    return failure(new ToolOutputError(`a post-execute listener returned an invalid decision ${describe(decision)}`), undefined, contexts)
  const hasContent = decision.content !== undefined
  const hasValue = 'value' in decision && decision.value !== undefined
  if (hasContent && hasValue) return failure(new ToolOutputError('a post-execute listener replaced both content and value; replace one'), undefined, contexts)
  if (hasValue) {
    if (result.isError) return failure(new ToolOutputError('a post-execute listener replaced the value of a failed call'), undefined, contexts)
    return normalize(definition, exec, decision.value, contexts)
  }
  if (hasContent) {
    try {
      return freezeResult({ ...result, content: toContent(decision.content, 'a post-execute listener'), ...(contexts && { additionalContexts: contexts }) })
    } catch (error) {
      return failure(error, undefined, contexts)
    }
  }
  if (contexts === result.additionalContexts) return result
  return freezeResult({ ...result, additionalContexts: contexts })
}

/**
 * Applies what the presentation phase settled on: new content for an accepted direct result, its
 * value, meta and contexts kept. Malformed content keeps the result as it was and reports why.
 */
export function applyPresentation(result: ToolExecutionResult, content: unknown): { result: ToolExecutionResult; problem?: string } {
  if (content === result.content) return { result }
  try {
    return { result: freezeResult({ ...result, content: toContent(content, 'a tools/present listener') }) }
  } catch (error) {
    return { result, problem: errorMessage(error) }
  }
}
