import { contentText, type ToolExecutionResult } from '@cordage/core'

/** The value of a successful result; throws naming the failure's code and message otherwise. */
export function valueOf(result: ToolExecutionResult): any {
  if (result.isError) throw new Error(`expected success, got ${result.error.info?.code}: ${result.error.message}`)
  return result.value
}

/** The code of a failed result; throws showing the value of a success. */
export function codeOf(result: ToolExecutionResult): string | undefined {
  if (!result.isError) throw new Error(`expected a failure, got ${JSON.stringify(result.value).slice(0, 200)}`)
  return result.error.info?.code
}

/** The text the model sees. */
export const textOf = (result: ToolExecutionResult): string => contentText(result.content)
