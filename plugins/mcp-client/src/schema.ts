import { checkSupportedSchema, compileValidator, formatViolations, nestSchema, type JsonSchemaNode, errorMessage } from '@cordage/core'

/** Why `schema` cannot be enforced locally, or undefined when it is in the supported subset and compiles. */
export function unsupportedReason(schema: unknown, root: 'object' | 'any' = 'any'): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'the schema is not an object'
  if (root === 'object' && (schema as JsonSchemaNode).type !== 'object') return 'the root is not { "type": "object" }'
  const violations = checkSupportedSchema(schema)
  if (violations.length) return `outside the supported JSON Schema subset:\n${formatViolations(violations)}`
  const regex = regexKeyword(schema as JsonSchemaNode)
  if (regex) return `it holds a regular expression (${regex}), which is not run locally: a backtracking pattern could stall the process`
  try {
    compileValidator(schema as JsonSchemaNode)
  } catch (error) {
    return `it does not compile: ${errorMessage(error)}`
  }
}

const SCHEMA_KEYWORDS = ['additionalProperties', 'propertyNames', 'items', 'contains', 'not']
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', '$defs', 'definitions']
const SCHEMA_LIST_KEYWORDS = ['prefixItems', 'oneOf', 'anyOf', 'allOf']

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * The pointer of the first `pattern` or `patternProperties` in a schema of the supported subset. A server
 * controls both its schemas and the values checked against them, and a regular expression runs
 * synchronously with backtracking: `^(a+)+$` against 40 "a"s and a "!" would take hours.
 */
function regexKeyword(schema: JsonSchemaNode): string | undefined {
  const stack: Array<[unknown, string]> = [[schema, '']]
  while (stack.length) {
    const [node, path] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    const record = node as Record<string, unknown>
    if (typeof record.pattern === 'string') return `${path}/pattern`
    if (typeof record.patternProperties === 'object' && record.patternProperties !== null && Object.keys(record.patternProperties).length)
      return `${path}/patternProperties`
    const at = (key: string) => `${path}/${escapePointer(key)}`
    for (const key of SCHEMA_KEYWORDS) if (Object.hasOwn(record, key)) stack.push([record[key], at(key)])
    for (const key of SCHEMA_LIST_KEYWORDS)
      if (Array.isArray(record[key])) (record[key] as unknown[]).forEach((child, index) => stack.push([child, `${at(key)}/${index}`]))
    for (const key of SCHEMA_MAP_KEYWORDS) {
      const map = record[key]
      if (typeof map === 'object' && map !== null) for (const [name, child] of Object.entries(map)) stack.push([child, `${at(key)}/${escapePointer(name)}`])
    }
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
