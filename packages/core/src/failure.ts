import type { ContentBlock, HookContext, ToolExecutionResult } from './content.js'
import { CordageError } from './errors.js'
import { deepFreeze } from './json.js'

/** The message of any thrown value: an error's message, a string as is, anything else described. */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error || CordageError.is(error)) return String((error as Error).message)
    if (typeof error === 'string') return error
  } catch {
    return 'an error whose message cannot be read was thrown'
  }
  try {
    return `non-Error thrown: ${JSON.stringify(error)}`
  } catch {
    try {
      return `non-Error thrown: ${String(error)}`
    } catch {
      return `non-Error thrown: ${Object.prototype.toString.call(error)}`
    }
  }
}

/** The `{ name, code }` of a `CordageError` (both strings), or `undefined` for anything else. */
function infoOf(error: unknown): { name: string; code: string } | undefined {
  try {
    if (!CordageError.is(error)) return undefined
    const { name, code } = error
    return typeof name === 'string' && typeof code === 'string' ? { name, code } : undefined
  } catch {
    return undefined
  }
}

/** Freezes a result shallowly plus its content, error and contexts; the value is already deep-frozen. */
export function freezeResult(result: ToolExecutionResult): ToolExecutionResult {
  // Content built by a snapshot is frozen as it is copied; anything else is frozen here.
  if (!Object.isFrozen(result.content)) deepFreeze(result.content)
  if (result.isError) deepFreeze(result.error)
  if (result.additionalContexts) deepFreeze(result.additionalContexts)
  return Object.freeze(result)
}

/**
 * Builds a frozen failure result: `error.info` carries the class name and code of a `CordageError`,
 * and the content is `Error: <message>` unless `content` is given.
 */
export function failure(error: unknown, content?: ContentBlock[], additionalContexts?: HookContext[]): ToolExecutionResult {
  const message = errorMessage(error)
  const info = infoOf(error)
  const result: ToolExecutionResult = {
    isError: true,
    error: info ? { message, info } : { message },
    content: content ?? (Object.freeze([Object.freeze({ type: 'text' as const, text: `Error: ${message}` })]) as ContentBlock[]),
  }
  if (additionalContexts?.length) result.additionalContexts = additionalContexts
  return freezeResult(result)
}
