import type { ContentBlock } from '@cordage/core'
import type { ContentBlock as McpContent } from '@modelcontextprotocol/sdk/types.js'

/** Projects Cordage content blocks onto MCP content (a resource without text becomes a resource_link). */
export function toMcpContent(blocks: readonly ContentBlock[]): McpContent[] {
  return blocks.map((block): McpContent => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text }
      case 'image':
        return { type: 'image', data: block.data, mimeType: block.mimeType }
      case 'resource':
        if (block.text === undefined)
          return { type: 'resource_link', uri: block.uri, name: block.uri, ...(block.mimeType !== undefined && { mimeType: block.mimeType }) }
        return { type: 'resource', resource: { uri: block.uri, text: block.text, ...(block.mimeType !== undefined && { mimeType: block.mimeType }) } }
    }
  })
}
