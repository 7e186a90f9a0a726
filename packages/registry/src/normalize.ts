import {
  CordageError,
  ToolOutputError,
  compileValidator,
  errorMessage,
  failure,
  formatViolations,
  freezeResult,
  toJsonValue,
  type ContentBlock,
  type HookContext,
  type JsonValue,
  type ToolDefinition,
  type ToolExec,
  type ToolExecutionResult,
  type Validator,
  type Violation,
} from '@cordage/core'

/** Describes any value for a message without throwing (cycles, BigInt and hostile `toJSON` included). */
export function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/** Runs a compiled validator; a validator that throws (a stack overflow on a very deep value) is an error, not a crash. */
export function violationsOf(validate: Validator, value: unknown, fail: (reason: string, cause: unknown) => CordageError): readonly Violation[] {
  try {
    return validate(value)
  } catch (error) {
    throw fail(errorMessage(error), error)
  }
}

const BLOCK_CHECK: Record<string, (block: any) => boolean> = {
  text: (block) => typeof block.text === 'string',
  image: (block) => typeof block.data === 'string' && typeof block.mimeType === 'string',
  resource: (block) =>
    typeof block.uri === 'string' &&
    (block.mimeType === undefined || typeof block.mimeType === 'string') &&
    (block.text === undefined || typeof block.text === 'string'),
}

/** Snapshots and checks content blocks; throws `ToolOutputError` naming the first bad block. */
export function toContent(content: unknown, source: string): ContentBlock[] {
  if (!Array.isArray(content)) throw new ToolOutputError(`${source} must return an array of content blocks, got ${typeof content}`)
  let copy: JsonValue
  try {
    copy = toJsonValue(content, { freeze: true })
  } catch (error) {
    throw new ToolOutputError(`${source} returned content that is not JSON: ${errorMessage(error)}`, [], { cause: error })
  }
  ;(copy as any[]).forEach((block, index) => {
    const check = block && typeof block === 'object' ? BLOCK_CHECK[block.type] : undefined
    if (!check || !check(block)) throw new ToolOutputError(`${source} returned an invalid content block at index ${index} (expected text, image or resource)`)
  })
  return copy as ContentBlock[]
}

/** Snapshots additional contexts; malformed entries are a `ToolOutputError`. */
export function toContexts(contexts: unknown, source: string): HookContext[] {
  if (!Array.isArray(contexts) || contexts.some((c) => !c || typeof c.source !== 'string' || typeof c.text !== 'string')) {
    throw new ToolOutputError(`${source} returned additionalContexts that are not [{ source, text }]`)
  }
  return contexts.map((c) => Object.freeze({ source: c.source, text: c.text }))
}

/**
 * Normalises a value under `definition`: lossless snapshot → validate → deep-freeze → render →
 * (direct calls only) presentationMeta. Failures are results.
 */
export function normalize(definition: ToolDefinition, exec: ToolExec, raw: unknown, additionalContexts?: HookContext[]): ToolExecutionResult {
  let result: ToolExecutionResult
  try {
    let value: JsonValue
    try {
      value = toJsonValue(raw, { freeze: true })
    } catch (error) {
      throw new ToolOutputError(`tool "${definition.name}" returned a value that is not JSON: ${errorMessage(error)}`, [], { cause: error })
    }
    const violations = violationsOf(
      compileValidator(definition.output.schema),
      value,
      (reason, cause) => new ToolOutputError(`the value of tool "${definition.name}" could not be validated: ${reason}`, [], { cause }),
    )
    if (violations.length) {
      throw new ToolOutputError(`tool "${definition.name}" returned a value that does not match its output schema:\n${formatViolations(violations)}`, [
        ...violations,
      ])
    }
    let content: unknown
    try {
      content = definition.output.render(exec.arguments, value)
    } catch (error) {
      throw new ToolOutputError(`the renderer of tool "${definition.name}" threw: ${errorMessage(error)}`, [], { cause: error })
    }
    result = { isError: false, value, content: toContent(content, `the renderer of tool "${definition.name}"`) }
    if (exec.parent === undefined && definition.output.presentationMeta) {
      let meta: unknown
      try {
        meta = definition.output.presentationMeta(exec.arguments, value)
      } catch (error) {
        throw new ToolOutputError(`presentationMeta of tool "${definition.name}" threw: ${errorMessage(error)}`, [], { cause: error })
      }
      try {
        result.meta = toJsonValue(meta, { freeze: true })
      } catch (error) {
        throw new ToolOutputError(`presentationMeta of tool "${definition.name}" is not JSON: ${errorMessage(error)}`, [], { cause: error })
      }
    }
    if (additionalContexts?.length) result.additionalContexts = additionalContexts
  } catch (error) {
    return failure(error, undefined, additionalContexts)
  }
  return freezeResult(result)
}

/** Carries a wrapper-authored failure's message and code into a registry failure. */
export class FailureFrom extends Error {
  constructor(error: unknown) {
    const source = (error && typeof error === 'object' ? error : {}) as { message?: unknown; info?: { name?: unknown; code?: unknown } }
    super(typeof source.message === 'string' ? source.message : 'the tool failed')
    const info = source.info
    if (info && typeof info.code === 'string' && typeof info.name === 'string') {
      Object.assign(this, { code: info.code })
      Object.defineProperty(this, 'name', { value: info.name })
      Object.defineProperty(this, Symbol.for('cordage.error'), { value: true })
    }
  }
}
