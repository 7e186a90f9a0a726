import type { ContentBlock, JsonValue } from '@cordage/core'

/** The canonical value of a bridged MCP tool: the server's content items and its structured result. */
export interface McpResult {
  content: JsonValue[]
  structuredContent?: { [key: string]: JsonValue }
}

/** What the model sees for a bridged tool: the MCP content, the structured result as JSON text, or both. */
export type ModelSees = 'content' | 'structured' | 'both'

type Item = { [key: string]: JsonValue }

const str = (value: JsonValue | undefined): string | undefined => (typeof value === 'string' ? value : undefined)

/** Approximate decoded size of a base64 string. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

/** Projects one MCP content item onto Cordage content blocks (audio and unknown kinds become text notices). */
export function toContentBlock(value: JsonValue): ContentBlock {
  const item = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Item
  switch (item.type) {
    case 'text':
      return { type: 'text', text: str(item.text) ?? '' }
    case 'image': {
      const data = str(item.data)
      const mimeType = str(item.mimeType)
      if (data !== undefined && mimeType !== undefined) return { type: 'image', data, mimeType }
      return { type: 'text', text: '[image without data or MIME type omitted]' }
    }
    case 'audio':
      return { type: 'text', text: `[audio ${str(item.mimeType) ?? 'of unknown type'}, ${base64Bytes(str(item.data) ?? '')} bytes, not shown]` }
    case 'resource': {
      const resource = (typeof item.resource === 'object' && item.resource !== null && !Array.isArray(item.resource) ? item.resource : {}) as Item
      const uri = str(resource.uri) ?? ''
      const mimeType = str(resource.mimeType)
      const text = str(resource.text)
      const block: ContentBlock = { type: 'resource', uri }
      if (mimeType !== undefined) block.mimeType = mimeType
      if (text !== undefined) block.text = text
      else if (typeof resource.blob === 'string') block.text = `[binary resource, ${base64Bytes(resource.blob)} bytes, not shown]`
      return block
    }
    case 'resource_link': {
      const name = str(item.title) ?? str(item.name) ?? ''
      const mime = str(item.mimeType) ? ` (${str(item.mimeType)})` : ''
      const description = str(item.description) ? ` - ${str(item.description)}` : ''
      return { type: 'text', text: `[resource link] ${name ? `${name} ` : ''}<${str(item.uri) ?? ''}>${mime}${description}` }
    }
    default:
      return { type: 'text', text: `[MCP content of type ${JSON.stringify(item.type ?? null)} not shown]` }
  }
}

/** Deep equality of two JSON values (object key order ignored). */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]!))
  }
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key]!, b[key]!))
}

/** True when `text` is exactly a JSON rendering of `value` (any formatting). */
function isJsonOf(text: string, value: JsonValue): boolean {
  const trimmed = text.trim()
  if (!trimmed.startsWith('{')) return false
  try {
    return jsonEqual(JSON.parse(trimmed), value)
  } catch {
    return false
  }
}

/** Renders an `McpResult` for the model according to `modelSees` (pure and total). */
export function renderMcpResult(value: McpResult, modelSees: ModelSees): ContentBlock[] {
  const structured = value.structuredContent
  if (modelSees === 'structured' && structured !== undefined) return [{ type: 'text', text: JSON.stringify(structured) }]
  const blocks = value.content.map(toContentBlock)
  if (structured !== undefined) {
    // `content` mode still shows the structured result when the server sent no content at all.
    const append = blocks.length === 0 || (modelSees === 'both' && !blocks.some((block) => block.type === 'text' && isJsonOf(block.text, structured)))
    if (append) blocks.push({ type: 'text', text: JSON.stringify(structured) })
  }
  return blocks.length ? blocks : [{ type: 'text', text: '(the tool returned no content)' }]
}
