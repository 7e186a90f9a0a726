import type { JsonValue } from './json.js'
import { UnsupportedSchemaError, type Violation } from './errors.js'

/** A JSON Schema (draft 2020-12 subset) as plain data: the raw form used by dynamic tools. */
export interface JsonSchemaNode {
  type?: JsonSchemaType | JsonSchemaType[]
  enum?: JsonValue[]
  const?: JsonValue
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: JsonSchema
  patternProperties?: Record<string, JsonSchema>
  propertyNames?: JsonSchema
  minProperties?: number
  maxProperties?: number
  items?: JsonSchema
  prefixItems?: JsonSchema[]
  minItems?: number
  maxItems?: number
  uniqueItems?: boolean
  contains?: JsonSchema
  oneOf?: JsonSchema[]
  anyOf?: JsonSchema[]
  allOf?: JsonSchema[]
  not?: JsonSchema
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  multipleOf?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  format?: string
  $ref?: string
  $defs?: Record<string, JsonSchema>
  $schema?: string
  $comment?: string
  title?: string
  description?: string
  default?: JsonValue
  examples?: JsonValue[]
  deprecated?: boolean
  readOnly?: boolean
  writeOnly?: boolean
}

/** A schema or a boolean schema (`true` accepts anything, `false` nothing). */
export type JsonSchema = JsonSchemaNode | boolean

export type JsonSchemaType = 'null' | 'boolean' | 'object' | 'array' | 'number' | 'integer' | 'string'

const TYPES = new Set<string>(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'])

/** Formats ajv-formats validates; any other `format` is rejected rather than silently ignored. */
export const SUPPORTED_FORMATS: readonly string[] = [
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]
const FORMATS = new Set(SUPPORTED_FORMATS)

type Kind =
  'schema' | 'schemaMap' | 'schemaList' | 'number' | 'natural' | 'boolean' | 'string' | 'stringList' | 'any' | 'anyList' | 'type' | 'pattern' | 'format' | 'ref'

/** Every keyword the supported subset accepts, with the shape of its value. */
const KEYWORDS: Record<string, Kind> = {
  type: 'type',
  enum: 'anyList',
  const: 'any',
  properties: 'schemaMap',
  required: 'stringList',
  additionalProperties: 'schema',
  patternProperties: 'schemaMap',
  propertyNames: 'schema',
  minProperties: 'natural',
  maxProperties: 'natural',
  items: 'schema',
  prefixItems: 'schemaList',
  minItems: 'natural',
  maxItems: 'natural',
  uniqueItems: 'boolean',
  contains: 'schema',
  oneOf: 'schemaList',
  anyOf: 'schemaList',
  allOf: 'schemaList',
  not: 'schema',
  minimum: 'number',
  maximum: 'number',
  exclusiveMinimum: 'number',
  exclusiveMaximum: 'number',
  multipleOf: 'number',
  minLength: 'natural',
  maxLength: 'natural',
  pattern: 'pattern',
  format: 'format',
  $ref: 'ref',
  $defs: 'schemaMap',
  definitions: 'schemaMap',
  $schema: 'string',
  $comment: 'string',
  $id: 'string',
  title: 'string',
  description: 'string',
  default: 'any',
  examples: 'anyList',
  deprecated: 'boolean',
  readOnly: 'boolean',
  writeOnly: 'boolean',
}

const ALLOWED_DIALECTS = ['https://json-schema.org/draft/2020-12/schema', 'http://json-schema.org/draft-07/schema', 'https://json-schema.org/draft-07/schema']

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}

function resolveLocalRef(root: JsonSchema, ref: string): boolean {
  if (ref === '#') return true
  if (!ref.startsWith('#/')) return false
  let node: any = root
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return false
    node = node[key]
  }
  return typeof node === 'boolean' || (typeof node === 'object' && node !== null)
}

/** Lists every violation of the supported subset in `schema` (empty when it is supported). */
export function checkSupportedSchema(schema: unknown): Violation[] {
  const violations: Violation[] = []
  const stack: Array<[unknown, string]> = [[schema, '']]
  while (stack.length) {
    const [node, path] = stack.pop()!
    if (typeof node === 'boolean') continue
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      violations.push({ path, message: 'a schema must be an object or a boolean' })
      continue
    }
    const push = (message: string, key: string) => violations.push({ path: `${path}/${escapePointer(key)}`, message })
    for (const [key, value] of Object.entries(node)) {
      const kind = KEYWORDS[key]
      const at = `${path}/${escapePointer(key)}`
      if (!kind) {
        push(`unsupported keyword "${key}"`, key)
        continue
      }
      switch (kind) {
        case 'schema':
          if (key === 'items' && Array.isArray(value)) push('array-form "items" is draft-07 tuple syntax; use "prefixItems"', key)
          else stack.push([value, at])
          break
        case 'schemaMap':
          if (typeof value !== 'object' || value === null || Array.isArray(value)) push('must be an object of schemas', key)
          else for (const [name, child] of Object.entries(value)) stack.push([child, `${at}/${escapePointer(name)}`])
          if (key === 'patternProperties' && typeof value === 'object' && value) {
            for (const pattern of Object.keys(value)) if (!validPattern(pattern)) push(`invalid regular expression ${JSON.stringify(pattern)}`, key)
          }
          break
        case 'schemaList':
          if (!Array.isArray(value) || (value.length === 0 && key !== 'prefixItems')) push('must be a non-empty array of schemas', key)
          else value.forEach((child, index) => stack.push([child, `${at}/${index}`]))
          break
        case 'number':
          if (typeof value !== 'number' || !Number.isFinite(value)) push('must be a finite number', key)
          else if (key === 'multipleOf' && value <= 0) push('must be greater than 0', key)
          break
        case 'natural':
          if (!Number.isInteger(value) || (value as number) < 0) push('must be a non-negative integer', key)
          break
        case 'boolean':
          if (typeof value !== 'boolean') push('must be a boolean', key)
          break
        case 'string':
          if (typeof value !== 'string') push('must be a string', key)
          else if (key === '$schema' && !ALLOWED_DIALECTS.includes(value.replace(/#$/, '')))
            push(`unsupported dialect ${JSON.stringify(value)} (use draft 2020-12)`, key)
          else if (key === '$id' && path !== '') push('$id is only supported at the root', key)
          break
        case 'stringList':
          if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) push('must be an array of strings', key)
          break
        case 'anyList':
          if (!Array.isArray(value)) push('must be an array', key)
          break
        case 'any':
          break
        case 'type': {
          const list = Array.isArray(value) ? value : [value]
          if (list.length === 0 || list.some((item) => typeof item !== 'string' || !TYPES.has(item))) {
            push(`must be one of ${[...TYPES].join(', ')} or an array of them`, key)
          }
          break
        }
        case 'pattern':
          if (typeof value !== 'string' || !validPattern(value)) push(`invalid regular expression ${JSON.stringify(value)}`, key)
          break
        case 'format':
          if (typeof value !== 'string' || !FORMATS.has(value)) push(`unsupported format ${JSON.stringify(value)}`, key)
          break
        case 'ref':
          if (typeof value !== 'string') push('must be a string', key)
          else if (!value.startsWith('#')) push(`only local references are supported, got ${JSON.stringify(value)}`, key)
          else if (!resolveLocalRef(schema as JsonSchema, value)) push(`unresolvable reference ${JSON.stringify(value)}`, key)
          break
      }
    }
  }
  return violations.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

function validPattern(source: string): boolean {
  try {
    return RegExp(source, 'u') instanceof RegExp
  } catch {
    return false
  }
}

/** Throws `UnsupportedSchemaError` listing every violation when `schema` is outside the supported subset. */
export function assertSupportedSchema(schema: unknown, label = 'schema'): asserts schema is JsonSchema {
  const violations = checkSupportedSchema(schema)
  if (violations.length) throw new UnsupportedSchemaError(`${label} is outside the supported JSON Schema subset`, violations)
}

/** Keywords whose values are data, not schemas: `$ref` strings inside them are left alone. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])

/**
 * Deep-copies `schema` for use at `pointer` inside a larger schema (e.g. `/properties/result`): local
 * `$ref`s are rebased onto the new position and the root-only `$schema`/`$id` are dropped.
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
