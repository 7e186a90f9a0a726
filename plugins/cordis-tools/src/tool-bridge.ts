import { toJsonValue, type ContentBlock, type JsonSchemaNode, type JsonValue, type ToolDefinition } from '@cordage/core'
import { FacadeError } from './errors.js'
import type { Sandbox } from './sandbox.js'

/** A host-realm copy of a value from the mount's realm, as lossless JSON (throws `NOT_JSON` naming the path). */
export function toHost(value: unknown): JsonValue {
  return toJsonValue(structuredClone(value))
}

function field(spec: Record<string, unknown>, key: string, type: string): unknown {
  const value = spec[key]
  if (value !== undefined && typeof value !== type) throw new FacadeError(`defineTool: ${key} must be a ${type}`)
  return value
}

/**
 * The `defineTool` lent to mounted code. It returns an opaque ticket; only tickets it made can be
 * registered, so every mounted tool has host-realm schemas and bodies whose returns are copied into the
 * host realm before the registry validates them. Parameters and output schemas are raw JSON Schema.
 */
export class ToolBridge {
  private readonly tickets = new WeakMap<object, ToolDefinition>()

  constructor(private readonly sandbox: Sandbox) {}

  /** Builds a definition from the code's spec; the ticket is a frozen empty object. */
  define = (spec: unknown): object => {
    if (!spec || typeof spec !== 'object')
      throw new FacadeError('defineTool takes one object: { name, description, parameters?, output: { schema, render }, execute }')
    const raw = spec as Record<string, unknown>
    const name = field(raw, 'name', 'string') as string | undefined
    const description = field(raw, 'description', 'string') as string | undefined
    const execute = field(raw, 'execute', 'function') as Function | undefined
    const output = raw.output as Record<string, unknown> | undefined
    if (!name || description === undefined || !execute) throw new FacadeError('defineTool needs name, description and execute')
    if (!output || typeof output !== 'object' || typeof output.render !== 'function' || output.schema === undefined) {
      throw new FacadeError(`defineTool "${name}": output needs { schema (JSON Schema), render(args, value) → content blocks }`)
    }
    const render = output.render as Function
    const sandbox = this.sandbox
    const definition: ToolDefinition = {
      name,
      description,
      parameters: toHost(raw.parameters ?? { type: 'object', properties: {} }) as JsonSchemaNode,
      output: {
        schema: toHost(output.schema) as JsonSchemaNode,
        render: (args, value) => toHost(sandbox.call(render, undefined, [args, value])) as unknown as ContentBlock[],
      },
      async execute(args, exec) {
        const view = Object.freeze({ callId: exec.callId, name: exec.name, arguments: exec.arguments, signal: exec.signal })
        return toHost(await sandbox.call<unknown>(execute, undefined, [args, view]))
      },
    }
    const timeoutMs = raw.timeoutMs
    if (typeof timeoutMs === 'number') definition.timeoutMs = timeoutMs
    if (raw.concurrency === 'parallel' || raw.concurrency === 'exclusive') definition.concurrency = raw.concurrency
    const ticket = Object.freeze(Object.create(null) as object)
    this.tickets.set(ticket, definition)
    return ticket
  }

  /** The definition behind a ticket, or a teaching error for anything else. */
  definition(ticket: unknown): ToolDefinition {
    const definition = ticket && typeof ticket === 'object' ? this.tickets.get(ticket) : undefined
    if (!definition) throw new FacadeError('ctx.tools.register accepts only tools made with defineTool(...) in this mount')
    return definition
  }
}
