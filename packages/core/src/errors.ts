/** A violation of a JSON Schema: `path` is a JSON pointer (`''` for the root). */
export interface Violation {
  path: string
  message: string
}

const kCordageError = Symbol.for('cordage.error')

/** Base of every Cordage error; route on `code`, never on `message`. */
export class CordageError extends Error {
  /** Works across duplicated copies of this package (checks a global symbol brand, not the prototype chain). */
  static is(value: unknown): value is CordageError {
    return typeof value === 'object' && value !== null && (value as any)[kCordageError] === true
  }

  readonly code: string

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    Object.defineProperty(this, kCordageError, { value: true })
    Object.defineProperty(this, 'name', { value: new.target.name, configurable: true, writable: true })
  }
}

/** A tool call's arguments do not satisfy its parameter schema, or are not JSON. */
export class ToolArgsError extends CordageError {
  constructor(
    message: string,
    readonly violations: Violation[] = [],
    options?: { cause?: unknown },
  ) {
    super('INVALID_ARGS', message, options)
  }
}

/** A tool's output was not lossless JSON, did not satisfy its output schema, or could not be rendered. */
export class ToolOutputError extends CordageError {
  constructor(
    message: string,
    readonly violations: Violation[] = [],
    options?: { cause?: unknown },
  ) {
    super('INVALID_TOOL_OUTPUT', message, options)
  }
}

/** No tool is registered under the requested name. */
export class UnknownToolError extends CordageError {
  constructor(
    readonly toolName: string,
    available: string[],
    reason = 'is unknown',
  ) {
    const list = available.length ? available.join(', ') : '(none)'
    super('UNKNOWN_TOOL', reason === 'is unknown' ? `unknown tool "${toolName}"; available: ${list}` : `tool "${toolName}" ${reason}; available: ${list}`)
  }
}

/** A policy, guard or approver refused the call. */
export class ToolDeniedError extends CordageError {
  constructor(message: string) {
    super('DENIED', message)
  }
}

/** The caller cancelled the call after the body started. */
export class ToolAbortedError extends CordageError {
  constructor(message = 'the tool call was cancelled') {
    super('ABORTED', message)
  }
}

/** The caller cancelled the call before its body started. */
export class ToolAbortedBeforeDispatchError extends CordageError {
  constructor(message = 'the tool call was cancelled before it started') {
    super('ABORTED_BEFORE_DISPATCH', message)
  }
}

/** The tool's body ran past its `timeoutMs`. */
export class ToolTimeoutError extends CordageError {
  constructor(readonly timeoutMs: number) {
    super('TOOL_TIMEOUT', `the tool did not finish within ${timeoutMs} ms`)
  }
}

/** A schema uses constructs outside the supported JSON Schema subset; `violations` lists every one. */
export class UnsupportedSchemaError extends CordageError {
  constructor(
    message: string,
    readonly violations: Violation[] = [],
  ) {
    super('UNSUPPORTED_SCHEMA', violations.length ? `${message}:\n${formatViolations(violations)}` : message)
  }
}

/** A value is not lossless JSON; `path` names the first offence (`$` is the root). */
export class NotJsonError extends CordageError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super('NOT_JSON', `${path}: ${reason}`)
  }
}

/** A tool definition is malformed (a developer-facing registration error). */
export class ToolDefinitionError extends CordageError {
  constructor(message: string) {
    super('INVALID_TOOL_DEFINITION', message)
  }
}

/** Formats violations one per line as `<pointer or (root)>: <message>`. */
export function formatViolations(violations: readonly Violation[]): string {
  return violations.map((v) => `  ${v.path || '(root)'}: ${v.message}`).join('\n')
}
