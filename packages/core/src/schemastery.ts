import { errorMessage } from './failure.js'
import Schema from 'schemastery'
import { UnsupportedSchemaError, type Violation } from './errors.js'
import { toJsonValue, type JsonValue } from './json.js'
import type { JsonSchemaNode } from './schema.js'

/** The authoring form of a value schema: a schemastery schema, as Cordis plugins use for `Config`. */
export type ValueSchemaSpec<T = any> = Schema<any, T>

/** The value type a schemastery schema describes. */
export type Infer<S> = Schemastery.TypeT<S>

const CONTAINERS = new Set(['object', 'array', 'dict', 'tuple', 'intersect'])

function description(meta: Schema['meta']): string | undefined {
  const text = meta.description
  if (typeof text === 'string') return text
  if (text && typeof text === 'object') return text[''] ?? text.en ?? text['en-US'] ?? Object.values(text)[0]
  return undefined
}

function isEmptyContainer(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0
}

function convert(schema: Schema, path: string, violations: Violation[]): JsonSchemaNode {
  const meta = schema.meta ?? {}
  const node = convertType(schema, path, violations)
  const text = description(meta)
  if (text !== undefined) node.description = text
  if (meta.badges?.some((badge) => badge.text === 'deprecated')) node.deprecated = true
  // schemastery gives every container an implicit empty default; only explicit values are declarations.
  if (meta.default !== undefined && !(CONTAINERS.has(schema.type) && isEmptyContainer(meta.default))) {
    try {
      node.default = toJsonValue(meta.default) as JsonValue
    } catch (error) {
      violations.push({ path: `${path}/default`, message: `default is not JSON: ${errorMessage(error)}` })
    }
  }
  return node
}

function bounds(meta: Schema['meta'], node: JsonSchemaNode, min: keyof JsonSchemaNode, max: keyof JsonSchemaNode): void {
  if (typeof meta.min === 'number') (node as any)[min] = meta.min
  if (typeof meta.max === 'number' && Number.isFinite(meta.max)) (node as any)[max] = meta.max
}

function convertType(schema: Schema, path: string, violations: Violation[]): JsonSchemaNode {
  const meta = schema.meta ?? {}
  switch (schema.type) {
    case 'any':
      return {}
    case 'never':
      return { not: {} }
    case 'string': {
      const node: JsonSchemaNode = { type: 'string' }
      bounds(meta, node, 'minLength', 'maxLength')
      if (meta.pattern) {
        if (meta.pattern.flags && meta.pattern.flags.replace(/[gu]/g, '')) {
          violations.push({ path, message: `pattern flags "${meta.pattern.flags}" cannot be expressed in JSON Schema` })
        }
        node.pattern = meta.pattern.source
      }
      return node
    }
    case 'number': {
      const node: JsonSchemaNode = { type: meta.step === 1 && (meta.min ?? 0) % 1 === 0 ? 'integer' : 'number' }
      bounds(meta, node, 'minimum', 'maximum')
      if (meta.step && meta.step !== 1) node.multipleOf = meta.step
      return node
    }
    case 'boolean':
      return { type: 'boolean' }
    case 'const':
      try {
        return { const: toJsonValue(schema.value) }
      } catch (error) {
        violations.push({ path, message: `constant is not JSON: ${errorMessage(error)}` })
        return {}
      }
    case 'union': {
      const list = schema.list ?? []
      if (list.length && list.every((inner) => inner.type === 'const')) {
        return { enum: list.map((inner, index) => convert(inner, `${path}/enum/${index}`, violations).const!) }
      }
      return { anyOf: list.map((inner, index) => convert(inner, `${path}/anyOf/${index}`, violations)) }
    }
    case 'array': {
      const node: JsonSchemaNode = { type: 'array', items: convert(schema.inner!, `${path}/items`, violations) }
      bounds(meta, node, 'minItems', 'maxItems')
      return node
    }
    case 'tuple': {
      const list = schema.list ?? []
      const node: JsonSchemaNode = {
        type: 'array',
        prefixItems: list.map((inner, index) => convert(inner, `${path}/prefixItems/${index}`, violations)),
        items: false,
      }
      let required = 0
      list.forEach((inner, index) => {
        if (inner.meta?.required) required = index + 1
      })
      if (required) node.minItems = required
      return node
    }
    case 'object':
      return objectNode([schema], path, violations)
    case 'intersect': {
      const list = schema.list ?? []
      if (list.every((inner) => inner.type === 'object')) return objectNode(list, path, violations)
      violations.push({ path, message: 'Schema.intersect is supported only for objects' })
      return {}
    }
    case 'dict': {
      const node: JsonSchemaNode = { type: 'object', additionalProperties: convert(schema.inner!, `${path}/additionalProperties`, violations) }
      if (schema.sKey && schema.sKey.type === 'string' && schema.sKey.meta?.pattern) {
        node.propertyNames = { pattern: schema.sKey.meta.pattern.source }
      } else if (schema.sKey && schema.sKey.type !== 'string') {
        violations.push({ path: `${path}/propertyNames`, message: `dict keys must be strings, got Schema.${schema.sKey.type}` })
      }
      return node
    }
    default:
      violations.push({ path, message: `Schema.${schema.type}() cannot be expressed as JSON Schema (transforms, predicates and class checks are not JSON)` })
      return {}
  }
}

function objectNode(list: Schema[], path: string, violations: Violation[]): JsonSchemaNode {
  const properties: Record<string, JsonSchemaNode> = {}
  const required: string[] = []
  for (const schema of list) {
    for (const [key, inner] of Object.entries(schema.dict ?? {})) {
      properties[key] = convert(inner, `${path}/properties/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, violations)
      if (inner.meta?.required && !required.includes(key)) required.push(key)
    }
  }
  const node: JsonSchemaNode = { type: 'object', properties }
  if (required.length) node.required = required
  node.additionalProperties = false
  return node
}

/**
 * Converts the JSON-expressible subset of a schemastery schema to JSON Schema (draft 2020-12).
 * Throws `UnsupportedSchemaError` listing every construct that has no JSON Schema form.
 */
export function toJsonSchema(schema: ValueSchemaSpec): JsonSchemaNode {
  if (!schema || typeof schema !== 'function' || typeof (schema as Schema).type !== 'string') {
    throw new UnsupportedSchemaError('expected a schemastery schema (Schema.object(...), Schema.string(), ...)')
  }
  const violations: Violation[] = []
  const node = convert(schema, '', violations)
  if (violations.length) throw new UnsupportedSchemaError('the schema cannot be expressed as JSON Schema', violations)
  return node
}

/** True when `value` is a schemastery schema. */
export function isSchemastery(value: unknown): value is ValueSchemaSpec {
  return typeof value === 'function' && typeof (value as Schema).type === 'string' && 'meta' in (value as object)
}
