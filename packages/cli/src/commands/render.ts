import type { ContentBlock } from '@cordage/core'

/** Content blocks as terminal text: text as is, other blocks as one bracketed line. */
export function contentToText(content: readonly ContentBlock[]): string {
  return content
    .map((block) => {
      if (block.type === 'text') return block.text
      if (block.type === 'image') return `[image ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`
      return `[resource ${block.uri}${block.mimeType ? ` ${block.mimeType}` : ''}]${block.text ? `\n${block.text}` : ''}`
    })
    .join('\n')
}
