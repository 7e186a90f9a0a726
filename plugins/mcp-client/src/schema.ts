import { checkSupportedSchema, compileValidator, formatViolations, type JsonSchemaNode } from '@cordage/core'

/** Keywords whose values are data, not schemas: `$ref` strings inside them are left alone. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])

/**
 * Deep-copies `schema` for use at `pointer` inside a larger schema: local `$ref`s are rebased onto the
 * new position and the root's `$schema`/`$id` are dropped (they are only meaningful at a document root).
 */
export function nestSchema(schema: JsonSchemaNode, pointer: string): JsonSchemaNode {
  const copy = structuredClone(schema) as Record<string, unknown>
  delete copy.$schema
  delete copy.$id
  const stack: unknown[] = [copy]
  while (stack.length) {
    const node = stack.pop()
    if (typeof node !== 'object' || node === null) continue
    if (Array.isArray(node)) {
      stack.push(...node)
      continue
    }
    const record = node as Record<string, unknown>
    for (const [key, value] of Object.entries(record)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#')) record.$ref = `#${pointer}${value.slice(1)}`
      else if (!DATA_KEYWORDS.has(key)) stack.push(value)
    }
  }
  return copy as JsonSchemaNode
}

/** Why `schema` cannot be enforced locally, or undefined when it is in the supported subset and compiles. */
export function unsupportedReason(schema: unknown, root: 'object' | 'any' = 'any'): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'the schema is not an object'
  if (root === 'object' && (schema as JsonSchemaNode).type !== 'object') return 'the root is not { "type": "object" }'
  const violations = checkSupportedSchema(schema)
  if (violations.length) return `outside the supported JSON Schema subset:\n${formatViolations(violations)}`
  try {
    compileValidator(schema as JsonSchemaNode)
  } catch (error) {
    return `it does not compile: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** The local view of one MCP tool's schemas. */
export interface BridgedSchemas {
  parameters: JsonSchemaNode
  /** Set when the server's inputSchema could not be used; arguments are then checked by the server only. */
  parametersFallback?: string
  output: JsonSchemaNode
  /** Set when an advertised outputSchema could not be enforced; structuredContent is then any JSON object. */
  outputFallback?: string
}

/** Any JSON object: what an unsupported or absent `outputSchema` leaves for `structuredContent`. */
const ANY_OBJECT: JsonSchemaNode = { type: 'object' }

/** Builds the parameter schema and the `McpResult` output schema for an MCP tool descriptor. */
export function bridgeSchemas(inputSchema: unknown, outputSchema: unknown): BridgedSchemas {
  const result: Partial<BridgedSchemas> = {}
  const inputReason = unsupportedReason(inputSchema, 'object')
  if (inputReason) {
    result.parameters = { type: 'object' }
    result.parametersFallback = inputReason
  } else {
    result.parameters = inputSchema as JsonSchemaNode
  }
  let structured: JsonSchemaNode = ANY_OBJECT
  let required = ['content']
  if (outputSchema !== undefined) {
    const reason = unsupportedReason(outputSchema, 'object')
    if (reason) {
      result.outputFallback = reason
    } else {
      structured = nestSchema(outputSchema as JsonSchemaNode, '/properties/structuredContent')
      required = ['content', 'structuredContent']
    }
  }
  result.output = {
    type: 'object',
    properties: { content: { type: 'array', items: { type: 'object' } }, structuredContent: structured },
    required,
    additionalProperties: false,
  }
  // The nested copy must still be supported and compile (rebased refs); otherwise fall back.
  const wrappedReason = required.length === 2 ? unsupportedReason(result.output) : undefined
  if (wrappedReason) {
    result.outputFallback = wrappedReason
    result.output = { ...result.output, properties: { ...result.output.properties, structuredContent: ANY_OBJECT }, required: ['content'] }
  }
  return result as BridgedSchemas
}
