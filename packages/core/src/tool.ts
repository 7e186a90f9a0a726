import type { ContentBlock, HookContext } from './content.js'
import { ToolDefinitionError } from './errors.js'
import { deepFreeze, toJsonValue, type JsonValue } from './json.js'
import type { JsonSchemaNode } from './schema.js'
import { toJsonSchema, type Infer, type ValueSchemaSpec } from './schemastery.js'
import { compileDefaultingValidator } from './validator.js'

/** The immutable identity of one dispatch: a fresh opaque symbol per `execute` call. */
export type ToolExecutionToken = symbol

/** The per-call view every pipeline step sees. `arguments` is the frozen lossless snapshot of what the caller sent. */
export interface ToolExec {
  readonly token: ToolExecutionToken
  readonly callId: string
  readonly name: string
  readonly arguments: JsonValue
  readonly signal: AbortSignal
  /** The token of the enclosing call for nested (Code Mode) dispatch; absent for direct calls. */
  readonly parent?: ToolExecutionToken
  readonly agent?: string
}

/** What a tool body receives: the call's view plus `deferContext`, which queues context for this call's result. */
export interface ToolRunContext extends ToolExec {
  deferContext(context: HookContext): void
}

/** A tool's mandatory output declaration: the value schema and its pure projections. */
export interface ToolOutput<Args = any, Value = any> {
  schema: JsonSchemaNode
  /** Pure and synchronous: projects the validated value into model-facing content. */
  render(args: Args, value: Value): ContentBlock[]
  /** Pure and synchronous; computed for direct calls only. */
  presentationMeta?(args: Args, value: Value): JsonValue
}

/** Whether calls of a tool may run alongside others: a function answers per call (`true` = parallel-safe). */
export type ToolConcurrency = 'parallel' | 'exclusive' | ((args: JsonValue) => boolean)

/**
 * An argument that names a filesystem path, declared by the tool so path-aware policy can match the
 * canonical real path whatever spelling the caller used (`./x`, `a/../x`, an absolute path, a symlink).
 */
export interface ToolPathArgument {
  /** JSON pointer into the arguments, e.g. `/path`; a `*` segment matches every key or index (`/files/*`). */
  pointer: string
  /** `read` for paths the tool reads or searches under, `write` for paths it creates, changes or deletes. */
  access: 'read' | 'write'
  /** The path the tool uses when the argument is absent (e.g. grep's search root `.`); none means "no path". */
  default?: string
}

/**
 * Hints about what a tool does, with MCP's names and meanings (MCP tool annotations). They describe the
 * tool; they grant nothing (plan mode reads `readOnlyHint`; a bridged MCP tool carries its server's
 * hints). All optional; the registry rejects other keys and non-boolean values.
 */
export interface ToolAnnotations {
  /** The tool changes nothing in its environment. */
  readOnlyHint?: boolean
  /** When it does change things, it may destroy or overwrite (meaningful only when not read-only). */
  destructiveHint?: boolean
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint?: boolean
  /** It reaches an open world (the web, other systems) rather than a closed domain. */
  openWorldHint?: boolean
}

/** The keys `ToolAnnotations` may hold, each a boolean. */
export const TOOL_ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const

/** A registered tool: raw JSON Schemas, a body returning one JSON value, and its output declaration. */
export interface ToolDefinition<Args = any, Value = any> {
  /** `^[a-zA-Z0-9_-]{1,64}$` (provider function-name rules). */
  name: string
  description: string
  /** Object-rooted JSON Schema of the arguments. */
  parameters: JsonSchemaNode
  output: ToolOutput<Args, Value>
  execute(args: Args, exec: ToolRunContext): Value | Promise<Value>
  timeoutMs?: number
  concurrency?: ToolConcurrency
  /** The arguments that are filesystem paths, for path-aware policy (relative paths resolve against the workspace root). */
  paths?: readonly ToolPathArgument[]
  /** What the tool does, as MCP-style hints (`readOnlyHint`, …); listed by `ctx.tools.list()`. */
  annotations?: ToolAnnotations
  /**
   * Registered and callable through the whole pipeline, but left out of `list()`: a runtime tool offered
   * only to particular agents through their tool view (a child run's `structured_output`).
   */
  hidden?: boolean
}

/** The authoring form accepted by `defineTool`: schemastery schemas, with types inferred from them. */
export interface ToolSpec<P extends ValueSchemaSpec, O extends ValueSchemaSpec> {
  name: string
  description: string
  parameters: P
  output: {
    schema: O
    render(args: Infer<P>, value: Infer<O>): ContentBlock[]
    presentationMeta?(args: Infer<P>, value: Infer<O>): JsonValue
  }
  execute(args: Infer<P>, exec: ToolRunContext): Infer<O> | Promise<Infer<O>>
  timeoutMs?: number
  concurrency?: ToolConcurrency
  paths?: readonly ToolPathArgument[]
  annotations?: ToolAnnotations
  hidden?: boolean
}

/**
 * `execute` checked against the output schema as the caller wrote it: `S` is inferred from the finished
 * argument, after the callbacks are typed, so a wrong return type fails even where `O` could not be
 * inferred before them (see `defineTool`).
 */
export type ReturnsOutput<P extends ValueSchemaSpec, S extends ValueSchemaSpec> = {
  execute(args: Infer<P>, exec: ToolRunContext): Infer<S> | Promise<Infer<S>>
}

/** Tool names follow provider function-name rules. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

declare const unmatchable: unique symbol

/**
 * The parameter type of the `defineTool` overloads that make TypeScript resolve inline schemas first; no
 * value has it. It has the spec's shape because what TypeScript checks against these overloads stays
 * checked: a callback without parameters (`render: () => [{ type: 'text', ... }]`) gets its return type
 * here, and without `ContentBlock[]` as context its literals would widen.
 */
type InlineSchemaPass = ToolSpec<ValueSchemaSpec, ValueSchemaSpec> & { readonly [unmatchable]: never }

/**
 * Never matches; with the next two, declared before the generic signature so that inline schemas are
 * typed. When TypeScript first infers a generic call's type parameters it skips arguments that are calls
 * of generic functions returning callables (`Schema.object({...})`: schemastery schemas are callable),
 * and it types the callbacks before it looks at them again, so `P` and `O` would fall back to their
 * constraints (`args: any`). Checking the spec against a non-generic overload first resolves those inner
 * calls, TypeScript keeps each resolved call, and the generic overload then infers `P` and `O` from them
 * before it types the callbacks. Three, because only when more than three overloads fail does TypeScript
 * report the last one's error at the offending property ("The last overload gave the following error");
 * with fewer it lists every overload's error on `defineTool`. `tests/define-tool-types.test.ts` fails if
 * inline inference regresses.
 */
export function defineTool(spec: InlineSchemaPass): ToolDefinition<JsonValue>
export function defineTool(spec: InlineSchemaPass): ToolDefinition<JsonValue>
export function defineTool(spec: InlineSchemaPass): ToolDefinition<JsonValue>
/**
 * Builds a `ToolDefinition` from schemastery schemas: converts both schemas once and hands the body and
 * projectors the arguments with declared defaults applied (the recorded arguments stay as the caller
 * sent them). The registry validates arguments against `parameters` before any of them runs.
 *
 * `args` (in `execute`, `render` and `presentationMeta`) is `Infer<typeof parameters>` and `value` is
 * `Infer<typeof output.schema>`, whether the schemas are written inline or hoisted into constants;
 * `execute` must return that value type (`ReturnsOutput`).
 */
export function defineTool<P extends ValueSchemaSpec, O extends ValueSchemaSpec, S extends ValueSchemaSpec = O>(
  spec: ToolSpec<P, O> & { output: { schema: S } } & ReturnsOutput<P, S>,
): ToolDefinition<JsonValue, Infer<S>>
export function defineTool(input: ToolSpec<ValueSchemaSpec, ValueSchemaSpec> | InlineSchemaPass): ToolDefinition<JsonValue> {
  const spec = input as ToolSpec<ValueSchemaSpec, ValueSchemaSpec> // `InlineSchemaPass` has no values
  const parameters = toJsonSchema(spec.parameters)
  if (parameters.type !== 'object') {
    throw new ToolDefinitionError(`tool "${spec.name}": parameters must be Schema.object(...), got a ${parameters.type ?? 'non-object'} schema`)
  }
  const outputSchema = toJsonSchema(spec.output.schema)
  const hasDefaults = JSON.stringify(parameters).includes('"default"')
  const fillDefaults = hasDefaults ? compileDefaultingValidator(parameters) : undefined
  // The body, renderer and projector of one call share the prepared arguments of its snapshot; a
  // one-entry cache (not a WeakMap: identity hashes of frozen snapshots are slow) covers that sequence.
  let lastArgs: unknown
  let lastPrepared: any
  const prepare = (args: JsonValue): any => {
    if (!fillDefaults) return args
    if (args === lastArgs && args !== undefined) return lastPrepared
    // A detached copy (iterative, so very deep arguments are fine) the validator fills defaults into;
    // its violations are ignored: the registry rejected invalid arguments before the body ran.
    let copy: JsonValue
    try {
      copy = toJsonValue(args)
    } catch {
      return args
    }
    fillDefaults(copy)
    const result = deepFreeze(copy)
    if (typeof args === 'object' && args !== null && Object.isFrozen(args)) {
      lastArgs = args
      lastPrepared = result
    }
    return result
  }
  // Internally the value is whatever the output schema admits; the overloads did the type checking.
  const { render, presentationMeta } = spec.output
  const execute = spec.execute
  const definition: ToolDefinition<JsonValue> = {
    name: spec.name,
    description: spec.description,
    parameters,
    output: {
      schema: outputSchema,
      render: (args, value) => render(prepare(args), value),
      ...(presentationMeta && { presentationMeta: (args: JsonValue, value: any) => presentationMeta(prepare(args), value) }),
    },
    execute: (args, exec) => execute(prepare(args), exec),
  }
  if (spec.timeoutMs !== undefined) definition.timeoutMs = spec.timeoutMs
  if (spec.concurrency !== undefined) definition.concurrency = spec.concurrency
  if (spec.paths !== undefined) definition.paths = spec.paths
  if (spec.annotations !== undefined) definition.annotations = spec.annotations
  if (spec.hidden !== undefined) definition.hidden = spec.hidden
  return definition
}
