import type { JsonSchemaNode, JsonValue } from '@cordage/core'

/** Keywords whose values are data, not schemas: `$ref` strings inside them are left alone. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])

/** True when MCP can carry the value as `structuredContent` directly (an object-rooted schema). */
export function isObjectRoot(schema: JsonSchemaNode): boolean {
  return schema.type === 'object'
}

/** Copies `schema` for use at `pointer` in a larger schema, rebasing local `$ref`s and dropping root-only keywords. */
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
