import { isJsonObject, type ContentBlock, type JsonSchemaNode, type JsonValue, type ToolDefinition } from '@cordage/core'
import { FacadeError } from './errors.js'

/** A tool as mounted code declares it (the JSON a `register` request carries). */
export interface GuestToolSpec {
  name: string
  description: string
  parameters: JsonSchemaNode
  outputSchema: JsonSchemaNode
  timeoutMs?: number
  concurrency?: 'parallel' | 'exclusive'
  presentationMeta: boolean
}

/** What a mounted tool's body is run by: the mount's sandbox, abandoned when the call's signal aborts. */
export interface GuestToolRunner {
  runTool(payload: { id: number; args: JsonValue; exec: JsonValue; meta: boolean }, signal: AbortSignal): Promise<Record<string, JsonValue | undefined>>
}

// Keywords whose values are maps of subschemas by name, and those whose values are data, not schemas.
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions'])
const DATA = new Set(['enum', 'const', 'default', 'examples'])

/**
 * The first regular-expression keyword in a schema, if any. The registry validates arguments and values
 * with the schema's patterns on the host's thread, where a backtracking pattern (`^(a|a)+$`) runs for
 * hours, so mounted tools may not declare one.
 */
function regexKeyword(schema: JsonValue): string | undefined {
  const stack: JsonValue[] = [schema]
  while (stack.length) {
    const node = stack.pop()!
    if (Array.isArray(node)) for (const item of node) stack.push(item)
    if (!isJsonObject(node)) continue
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' || key === 'patternProperties') return key
      if (DATA.has(key)) continue
      if (SCHEMA_MAPS.has(key) && isJsonObject(value)) for (const child of Object.values(value)) stack.push(child)
      else stack.push(value)
    }
  }
  return undefined
}

/** Reads a `register` request's tool, or throws a model-readable `FACADE_DENIED`. */
export function readToolSpec(tool: unknown): GuestToolSpec {
  if (!isJsonObject(tool)) throw new FacadeError('register needs a tool made with defineTool')
  const { name, description, parameters, outputSchema, timeoutMs, concurrency, presentationMeta } = tool
  if (typeof name !== 'string' || typeof description !== 'string') throw new FacadeError('defineTool needs a string name and description')
  if (!isJsonObject(parameters) && typeof parameters !== 'boolean') throw new FacadeError(`defineTool "${name}": parameters must be a JSON Schema object`)
  if (!isJsonObject(outputSchema) && typeof outputSchema !== 'boolean') throw new FacadeError(`defineTool "${name}": output.schema must be a JSON Schema`)
  const regex = regexKeyword(parameters) ?? regexKeyword(outputSchema)
  if (regex !== undefined)
    throw new FacadeError(
      `defineTool "${name}": the schemas of mounted tools cannot use "${regex}" (the host would run the regular expression unbounded); check the text in execute instead`,
    )
  const spec: GuestToolSpec = {
    name,
    description,
    parameters: parameters as JsonSchemaNode,
    outputSchema: outputSchema as JsonSchemaNode,
    presentationMeta: presentationMeta === true,
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number') throw new FacadeError(`defineTool "${name}": timeoutMs must be a number of milliseconds`)
    spec.timeoutMs = timeoutMs
  }
  if (concurrency === 'parallel' || concurrency === 'exclusive') spec.concurrency = concurrency
  else if (concurrency !== undefined) throw new FacadeError(`defineTool "${name}": concurrency is 'parallel' or 'exclusive'`)
  return spec
}

/** What the body's run left for the renderer and presentationMeta of the same call. */
interface Rendered {
  valueText: string
  content?: JsonValue
  renderError?: string
  meta?: JsonValue
  metaError?: string
}

/**
 * The host-side definition of a mounted tool. Its body runs in the sandbox, which renders there too
 * (render is synchronous and the sandbox is another thread): the content and presentation metadata
 * travel back with the value and are kept for this call's arguments, so `render` and
 * `presentationMeta` hand them out when asked for that value. A value replaced after the body (a
 * post-execute decision) is rendered as its JSON text.
 */
export function mountedTool(id: number, spec: GuestToolSpec, runner: GuestToolRunner, defaultTimeoutMs: number): ToolDefinition {
  const rendered = new WeakMap<object, Rendered>()
  const lookup = (args: JsonValue, value: JsonValue): Rendered | undefined => {
    const entry = args !== null && typeof args === 'object' ? rendered.get(args) : undefined
    return entry && entry.valueText === JSON.stringify(value) ? entry : undefined
  }
  const definition: ToolDefinition = {
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    timeoutMs: spec.timeoutMs ?? defaultTimeoutMs,
    concurrency: spec.concurrency ?? 'exclusive',
    output: {
      schema: spec.outputSchema,
      render(args, value) {
        const entry = lookup(args, value)
        if (!entry) return [{ type: 'text', text: JSON.stringify(value, null, 2) }]
        if (entry.renderError !== undefined) throw new Error(entry.renderError)
        return entry.content as unknown as ContentBlock[]
      },
    },
    async execute(args, exec) {
      const view: JsonValue = { callId: exec.callId, name: exec.name, arguments: exec.arguments, ...(exec.agent !== undefined && { agent: exec.agent }) }
      const reply = await runner.runTool({ id, args, exec: view, meta: spec.presentationMeta && exec.parent === undefined }, exec.signal)
      if (typeof reply.threw === 'string') throw new Error(reply.threw)
      const value = reply.value as JsonValue
      const entry: Rendered = { valueText: JSON.stringify(value) }
      if (reply.content !== undefined) entry.content = reply.content
      if (typeof reply.renderError === 'string') entry.renderError = reply.renderError
      if (reply.meta !== undefined) entry.meta = reply.meta
      if (typeof reply.metaError === 'string') entry.metaError = reply.metaError
      if (args !== null && typeof args === 'object') rendered.set(args, entry)
      return value
    },
  }
  if (spec.presentationMeta) {
    definition.output.presentationMeta = (args, value) => {
      const entry = lookup(args, value)
      if (entry?.metaError !== undefined) throw new Error(entry.metaError)
      return entry?.meta ?? null
    }
  }
  return definition
}
