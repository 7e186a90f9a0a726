/**
 * TypeScript types for JSON Schema nodes, in two styles: `full` (one property per line, with the
 * schema's descriptions as JSDoc and `readonly` values) for `describeTool`, and `compact` (one line, no
 * docs, no `readonly`) for the SDK in `run_code`'s description, which every model request carries.
 */

/** How a type is printed. */
export interface TypeStyle {
  compact: boolean
  readonly: boolean
}

/** One schema being printed: its root (for local `$ref`), the style, and the references being followed. */
export interface Walk {
  root: unknown
  style: TypeStyle
  refs: string[]
  /** Compact style: every object literal printed, with the property names it appeared under. */
  objects?: Map<string, { count: number; labels: string[] }>
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const MAX_DEPTH = 24

/** A string as a TypeScript literal: single-quoted in the compact style (no escaped quotes in JSON). */
function quote(text: string, compact: boolean): string {
  const json = JSON.stringify(text)
  return compact ? `'${json.slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'` : json
}

/** A property key: bare when it is an identifier, quoted otherwise. */
export const propertyKey = (name: string, compact = false) => (IDENTIFIER.test(name) ? name : quote(name, compact))

/** One line of JSDoc text: whitespace collapsed, `*\/` escaped, at most `max` characters. */
export function docText(text: unknown, max = 200): string | undefined {
  if (typeof text !== 'string') return undefined
  const line = text.replace(/\s+/g, ' ').trim().replace(/\*\//g, '*\\/')
  if (!line) return undefined
  return line.length > max ? `${line.slice(0, max - 3)}...` : line
}

function literal(value: unknown, compact: boolean): string {
  if (typeof value === 'string') return quote(value, compact)
  return value === null || ['number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'JsonValue'
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)]
  if (unique.includes('unknown')) return 'unknown'
  // `&` binds tighter than `|`, so intersections need no parentheses here.
  return unique.length ? unique.join(' | ') : 'never'
}

function resolveRef(ref: string, walk: Walk): any {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref)
  return match ? (walk.root as any)?.[match[1]!]?.[match[2]!.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined
}

/** A TypeScript type for a JSON Schema node; constructs it cannot express become `unknown`. `label` names an object found under a property. */
export function toType(schema: any, indent: string, walk: Walk, depth: number, label = ''): string {
  if (schema === true) return 'JsonValue'
  if (schema === false) return 'never'
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return 'unknown'
  if (typeof schema.$ref === 'string') {
    const target = resolveRef(schema.$ref, walk)
    if (!target || walk.refs.includes(schema.$ref)) return 'unknown'
    walk.refs.push(schema.$ref)
    try {
      return toType(target, indent, walk, depth + 1, label)
    } finally {
      walk.refs.pop()
    }
  }
  if (schema.not !== undefined) return 'unknown'
  const compact = walk.style.compact
  if ('const' in schema) return literal(schema.const, compact)
  if (Array.isArray(schema.enum)) return union(schema.enum.map((value: unknown) => literal(value, compact)))
  const variants = schema.oneOf ?? schema.anyOf
  if (Array.isArray(variants)) return union(variants.map((inner: any) => toType(inner, indent, walk, depth + 1, label)))
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((inner: any) => toType(inner, indent, walk, depth + 1, label))
    return parts.includes('unknown') ? 'unknown' : parts.map((part: string) => (part.includes(' | ') ? `(${part})` : part)).join(' & ')
  }
  const types: string[] | undefined = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type : undefined
  if (types) return union(types.map((type) => typed(type, schema, indent, walk, depth, label)))
  if (schema.properties || schema.additionalProperties !== undefined || schema.patternProperties) return typed('object', schema, indent, walk, depth, label)
  if (schema.items !== undefined || schema.prefixItems) return typed('array', schema, indent, walk, depth, label)
  return 'JsonValue'
}

/** The singular of a plural property name, to label the objects in its array (`jobs` → `job`). */
function singular(label: string): string {
  if (/(ch|sh|x|ss)es$/.test(label)) return label.slice(0, -2)
  if (label.endsWith('ies')) return `${label.slice(0, -3)}y`
  return label.endsWith('s') && !label.endsWith('ss') ? label.slice(0, -1) : label
}

function typed(type: string, schema: any, indent: string, walk: Walk, depth: number, label: string): string {
  const ro = walk.style.readonly ? 'readonly ' : ''
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
      const itemLabel = singular(label)
      if (Array.isArray(schema.prefixItems)) {
        const items = schema.prefixItems.map((inner: any) => toType(inner, indent, walk, depth + 1, itemLabel))
        const rest =
          schema.items === false || schema.items === undefined
            ? ''
            : `${items.length ? ', ' : ''}...Array<${toType(schema.items, indent, walk, depth + 1, itemLabel)}>`
        return `${ro}[${items.join(', ')}${rest}]`
      }
      const item = schema.items === undefined ? 'JsonValue' : toType(schema.items, indent, walk, depth + 1, itemLabel)
      if (walk.style.readonly) return `ReadonlyArray<${item}>`
      // `T[]` binds tighter than unions and intersections: those keep the generic form.
      return walk.style.compact && !hasTopLevelOperator(item) ? `${item}[]` : `Array<${item}>`
    }
    case 'object':
      return objectType(schema, indent, walk, depth, label)
    default:
      return 'unknown'
  }
}

/** Whether a printed type has a `|` or `&` outside brackets and quotes (then `T[]` would bind to its last part). */
function hasTopLevelOperator(type: string): boolean {
  let depth = 0
  let quoted: string | undefined
  for (let i = 0; i < type.length; i++) {
    const char = type[i]!
    if (quoted) {
      if (char === '\\') i++
      else if (char === quoted) quoted = undefined
    } else if (char === "'" || char === '"') quoted = char
    else if ('{[(<'.includes(char)) depth++
    else if ('}])>'.includes(char)) depth--
    else if (depth === 0 && (char === '|' || char === '&')) return true
  }
  return false
}

function objectType(schema: any, indent: string, walk: Walk, depth: number, label: string): string {
  const { compact } = walk.style
  const inner = `${indent}  `
  const ro = walk.style.readonly ? 'readonly ' : ''
  const required = new Set<string>(Array.isArray(schema.required) ? schema.required : [])
  const lines: string[] = []
  for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
    if (!compact) {
      const doc = docText(property?.description)
      const tags = [doc, property?.deprecated === true ? '@deprecated' : undefined].filter(Boolean)
      if (tags.length) lines.push(`${inner}/** ${tags.join(' ')} */`)
    }
    const type = toType(property, inner, walk, depth + 1, name)
    lines.push(`${compact ? '' : inner}${ro}${propertyKey(name, compact)}${required.has(name) ? '' : '?'}: ${type}`)
  }
  const extra = schema.additionalProperties
  let index: string | undefined
  if (schema.patternProperties) index = 'unknown'
  else if (extra && typeof extra === 'object') index = toType(extra, inner, walk, depth + 1, label)
  else if (extra !== false && !lines.length) index = 'JsonValue'
  const body = lines.length ? (compact ? `{${lines.join(', ')}}` : `{\n${lines.join('\n')}\n${indent}}`) : undefined
  if (body && walk.objects) {
    const seen = walk.objects.get(body)
    if (!seen) walk.objects.set(body, { count: 1, labels: [label] })
    else {
      seen.count++
      if (!seen.labels.includes(label)) seen.labels.push(label)
    }
  }
  const map = index === undefined ? undefined : compact ? `{[key: string]: ${index}}` : `{ ${ro}[key: string]: ${index} }`
  if (body && map) return `${body} & ${map}`
  return body ?? map ?? '{}'
}
