import { nestSchema, type JsonSchemaNode, type JsonValue } from '@cordage/core'

/** True when MCP can carry the value as `structuredContent` directly (an object-rooted schema). */
export function isObjectRoot(schema: JsonSchemaNode): boolean {
  return schema.type === 'object'
}

const wrappedSchemas = new WeakMap<JsonSchemaNode, JsonSchemaNode>()

/** The MCP `outputSchema` of a tool: its output schema, or `{ result }` around it for non-object roots. */
export function mcpOutputSchema(schema: JsonSchemaNode): JsonSchemaNode {
  if (isObjectRoot(schema)) return schema
  let wrapped = wrappedSchemas.get(schema)
  if (!wrapped) {
    wrapped = { type: 'object', properties: { result: nestSchema(schema, '/properties/result') }, required: ['result'], additionalProperties: false }
    wrappedSchemas.set(schema, wrapped)
  }
  return wrapped
}

/** The MCP `structuredContent` of a value: the value itself, or `{ result: value }` for non-object roots. */
export function structuredContent(schema: JsonSchemaNode, value: JsonValue): { [key: string]: JsonValue } {
  return isObjectRoot(schema) ? (value as { [key: string]: JsonValue }) : { result: value }
}
