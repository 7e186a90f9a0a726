import { ToolOutputError, errorMessage, failure, type ContentBlock, type HookContext, type ToolDefinition, type ToolExecutionResult } from '@cordage/core'
import { deferredOf, type Call } from './call.js'
import { FailureFrom, describe, normalize, toContent, toContexts } from './normalize.js'

/**
 * What a `tools/execute` wrapper chain settled on, as a proper result of this call. The body's own
 * result passes as is. Anything else (a cached result, another call's, a spread copy, an authored
 * object, frozen or not) is rebuilt: a success from its `value` under `definition` (authored content
 * discarded), a failure from its `error` message and code (a `value` dropped, a missing `error`
 * described, malformed content replaced by `Error: <message>`). Well-formed `additionalContexts` are kept.
 */
export function fromWrapper(definition: ToolDefinition, call: Call, result: unknown, produced: ToolExecutionResult | undefined): ToolExecutionResult {
  if (result === produced && produced !== undefined) return produced
  try {
    return rebuild(definition, call, result)
  } catch (error) {
    // Accessors on an authored object may throw: what cannot be read is not a result.
    return failure(
      new ToolOutputError(`a tools/execute listener returned a result that could not be read: ${errorMessage(error)}`),
      undefined,
      deferredOf(call),
    )
  }
}

function rebuild(definition: ToolDefinition, call: Call, result: unknown): ToolExecutionResult {
  if (!result || typeof result !== 'object' || typeof (result as ToolExecutionResult).isError !== 'boolean') {
    return failure(new ToolOutputError(`a tools/execute listener returned ${describe(result)} instead of a result`), undefined, deferredOf(call))
  }
  const authored = result as ToolExecutionResult
  let contexts: HookContext[] | undefined
  try {
    contexts = authored.additionalContexts === undefined ? undefined : toContexts(authored.additionalContexts, 'a tools/execute listener')
  } catch (error) {
    return failure(error)
  }
  if (!authored.isError) return normalize(definition, call.exec, authored.value, contexts)
  let content: ContentBlock[] | undefined
  try {
    content = toContent(authored.content, 'a tools/execute listener')
  } catch {
    content = undefined
  }
  return failure(new FailureFrom(authored.error), content, contexts)
}
