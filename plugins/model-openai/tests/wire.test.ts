import { describe, expect, it } from 'vitest'
import type { Message } from '@cordage/services'
import { toWireMessages } from '../src/wire.js'

const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' }

describe('toWireMessages', () => {
  const conversation: Message[] = [
    { role: 'user', content: 'Show me the chart.' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'c1', name: 'screenshot', arguments: '{}' },
        { id: 'c2', name: 'read', arguments: '{"path":"a.md"}' },
      ],
    },
    { role: 'tool', callId: 'c1', name: 'screenshot', content: [{ type: 'text', text: 'Captured.' }, png], isError: false },
    {
      role: 'tool',
      callId: 'c2',
      name: 'read',
      content: [
        { type: 'text', text: 'line 1' },
        { type: 'text', text: 'line 2' },
        { type: 'resource', uri: 'file:///a.md', mimeType: 'text/markdown' },
      ],
      isError: false,
    },
    { role: 'assistant', content: 'Here it is.' },
  ]

  it('omits images by default, leaving a note in the tool text; joins text blocks with newlines; null content beside tool calls', () => {
    expect(toWireMessages(conversation, 'omit')).toEqual([
      { role: 'user', content: 'Show me the chart.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'screenshot', arguments: '{}' } },
          { id: 'c2', type: 'function', function: { name: 'read', arguments: '{"path":"a.md"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'Captured.\n[image/png image omitted: this model connection does not send images]' },
      { role: 'tool', tool_call_id: 'c2', content: 'line 1\nline 2\n[resource file:///a.md (text/markdown)]' },
      { role: 'assistant', content: 'Here it is.' },
    ])
  })

  it('attaches images as one user message after the batch of tool messages when images is attach', () => {
    const wire = toWireMessages(conversation, 'attach') as any[]
    expect(wire.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user', 'assistant'])
    expect(wire[2].content).toBe('Captured.\n[image/png image attached in the next user message]')
    expect(wire[4]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Image from tool screenshot (call c1):' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    })
  })
})
