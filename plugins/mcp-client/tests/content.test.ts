import { describe, expect, it } from 'vitest'
import { renderMcpResult } from '../src/content.js'

describe('renderMcpResult', () => {
  it.each([
    [
      'blob resource',
      [{ type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAAAA==' } }],
      [{ type: 'resource', uri: 'file:///a.bin', text: '[binary resource, 4 bytes, not shown]' }],
    ],
    ['unknown type', [{ type: 'hologram' }], [{ type: 'text', text: '[MCP content of type "hologram" not shown]' }]],
    ['nothing at all', [], [{ type: 'text', text: '(the tool returned no content)' }]],
  ] as const)('renders %s', (_label, content, expected) => {
    expect(renderMcpResult({ content: content as any }, 'content')).toEqual(expected)
  })

  it('shows structuredContent when the server sent no content, in every mode', () => {
    for (const mode of ['content', 'structured', 'both'] as const) {
      expect(renderMcpResult({ content: [], structuredContent: { a: 1 } }, mode)).toEqual([{ type: 'text', text: '{"a":1}' }])
    }
  })

  it('de-duplicates in both mode by JSON meaning, not formatting', () => {
    const value = { content: [{ type: 'text', text: '{\n  "b": [1, 2],\n  "a": null\n}' }], structuredContent: { a: null, b: [1, 2] } }
    expect(renderMcpResult(value, 'both')).toEqual([{ type: 'text', text: '{\n  "b": [1, 2],\n  "a": null\n}' }])
    expect(renderMcpResult({ ...value, structuredContent: { a: null, b: [2, 1] } }, 'both')).toHaveLength(2)
  })
})
