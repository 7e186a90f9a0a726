import type { JsonSchemaNode } from '@cordage/core'

/** The part of a listed tool the SDK is generated from. */
export interface SdkTool {
  name: string
  description: string
  parameters: JsonSchemaNode
  outputSchema: JsonSchemaNode
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const MAX_DEPTH = 24

interface Walk {
  root: any
  readonly: boolean
  refs: string[]
}

const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name))

/** One line of JSDoc text: whitespace collapsed, `*\/` escaped, at most 200 characters. */
function docText(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined
  const line = text.replace(/\s+/g, ' ').trim().replace(/\*\//g, '*\\/')
  if (!line) return undefined
  return line.length > 200 ? `${line.slice(0, 197)}...` : line
}

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'JsonValue'
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)]
  if (unique.includes('unknown')) return 'unknown'
  // `&` binds tighter than `|`, so intersections need no parentheses here.
  return unique.length ? unique.join(' | ') : 'never'
}

function resolveRef(ref: string, walk: Walk): any {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref)
  return match ? walk.root?.[match[1]]?.[match[2].replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
}

/** A TypeScript type for a JSON Schema node; constructs it cannot express become `unknown`. */
function toType(schema: any, indent: string, walk: Walk, depth: number): string {
  if (schema === true) return 'JsonValue'
  if (schema === false) return 'never'
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return 'unknown'
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, walk)
    if (!target || walk.refs.includes(schema.$ref)) return 'unknown'
    walk.refs.push(schema.$ref)
    try {
      return toType(target, indent, walk, depth + 1)
    } finally {
      walk.refs.pop()
    }
  }
  if (schema.not !== undefined) return 'unknown'
  if ('const' in schema) return literal(schema.const)
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal))
  const variants = schema.oneOf ?? schema.anyOf
  if (Array.isArray(variants)) return union(variants.map((inner: any) => toType(inner, indent, walk, depth + 1)))
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((inner: any) => toType(inner, indent, walk, depth + 1))
    return parts.includes('unknown') ? 'unknown' : parts.map((part: string) => (part.includes(' | ') ? `(${part})` : part)).join(' & ')
  }
  const types: string[] | undefined = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined
  if (types) return union(types.map((type) => typed(type, schema, indent, walk, depth)))
  if (schema.properties || schema.additionalProperties !== undefined || schema.patternProperties) return typed('object', schema, indent, walk, depth)
  if (schema.items !== undefined || schema.prefixItems) return typed('array', schema, indent, walk, depth)
  return 'JsonValue'
}

function typed(type: string, schema: any, indent: string, walk: Walk, depth: number): string {
  const ro = walk.readonly ? 'readonly ' : ''
  switch (type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      if (Array.isArray(schema.prefixItems)) {
        const items = schema.prefixItems.map((inner: any) => toType(inner, indent, walk, depth + 1))
        const rest =
          schema.items === false || schema.items === undefined ? '' : `${items.length ? ', ' : ''}...Array<${toType(schema.items, indent, walk, depth + 1)}>`
        return `${ro}[${items.join(', ')}${rest}]`
      }
      // Generic array syntax needs no parentheses around unions or intersections.
      const item = schema.items === undefined ? 'JsonValue' : toType(schema.items, indent, walk, depth + 1)
      return walk.readonly ? `ReadonlyArray<${item}>` : `Array<${item}>`
    }
    case 'object':
      return objectType(schema, indent, walk, depth)
    default:
      return 'unknown'
  }
}

function objectType(schema: any, indent: string, walk: Walk, depth: number): string {
  const inner = `${indent}  `
  const ro = walk.readonly ? 'readonly ' : ''
  const required = new Set<string>(Array.isArray(schema.required) ? schema.required : [])
  const lines: string[] = []
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
    const doc = docText(property?.description)
    const tags = [doc, property?.deprecated === true ? '@deprecated' : undefined].filter(Boolean)
    if (tags.length) lines.push(`${inner}/** ${tags.join(' ')} */`)
    lines.push(`${inner}${ro}${key(name)}${required.has(name) ? '' : '?'}: ${toType(property, inner, walk, depth + 1)}`)
  }
  const extra = schema.additionalProperties
  let index: string | undefined
  if (schema.patternProperties) index = 'unknown'
  else if (extra && typeof extra === 'object') index = toType(extra, inner, walk, depth + 1)
  else if (extra !== false && !lines.length) index = 'JsonValue'
  const body = lines.length ? `{\n${lines.join('\n')}\n${indent}}` : undefined
  const map = index === undefined ? undefined : `{ ${ro}[key: string]: ${index} }`
  if (body && map) return `${body} & ${map}`
  return body ?? map ?? '{}'
}

/**
 * Generates the TypeScript declarations a program is written against: `ToolArgsMap`, `ToolOutputMap`,
 * `ToolCallError` and the typed `tools` object, from each tool's parameter and output schemas.
 * Deterministic: the same tools (in `list()` order) give byte-identical text.
 */
export function generateSdk(tools: readonly SdkTool[]): string {
  const args: string[] = []
  const outputs: string[] = []
  const methods: string[] = []
  for (const tool of tools) {
    const name = key(tool.name)
    const quoted = JSON.stringify(tool.name)
    const doc = docText(tool.description?.split('\n')[0])
    args.push(`  ${name}: ${toType(tool.parameters, '  ', { root: tool.parameters, readonly: false, refs: [] }, 0)}`)
    outputs.push(`  ${name}: ${toType(tool.outputSchema, '  ', { root: tool.outputSchema, readonly: true, refs: [] }, 0)}`)
    if (doc) methods.push(`  /** ${doc} */`)
    methods.push(`  ${name}(args: ToolArgsMap[${quoted}]): Promise<ToolOutputMap[${quoted}]>`)
  }
  return [
    'type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }',
    '',
    '/** Arguments of each tool, by tool name. */',
    `interface ToolArgsMap {${args.length ? `\n${args.join('\n')}\n` : ''}}`,
    '',
    '/** The value each tool resolves to (deep-frozen), by tool name. */',
    `interface ToolOutputMap {${outputs.length ? `\n${outputs.join('\n')}\n` : ''}}`,
    '',
    '/** Thrown (rejected) when a tool call fails: denied, invalid arguments, or the tool failed. */',
    'declare class ToolCallError extends Error {',
    '  readonly toolName: string',
    '}',
    '',
    '/** Every tool the program may call: `await tools.name(args)`, or `tools["odd-name"](args)`. */',
    `declare const tools: {${methods.length ? `\n${methods.join('\n')}\n` : ''}}`,
    '',
    '/** Captured output: each call appends one line (strings raw, other values as JSON). */',
    'declare const console: { log(...values: unknown[]): void; info(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void; debug(...values: unknown[]): void }',
    '',
  ].join('\n')
}
