import type { Message } from './model.js'
import type { SessionEventBody } from './session-types.js'

/**
 * The message an event contributes to the conversation, or `undefined` (code dispatches, session end).
 * The agent builds its live messages with this same function, so replay is byte-identical by construction.
 */
export function messageOf(event: SessionEventBody): Message | undefined {
  switch (event.type) {
    case 'system/message':
      return { role: 'system', content: event.data.content }
    case 'user/message':
      return { role: 'user', content: event.data.content }
    case 'assistant/message': {
      const { content, toolCalls, thinking, model } = event.data
      const message: Message = { role: 'assistant', content }
      if (toolCalls?.length) message.toolCalls = toolCalls
      // The producing model matters only to decide whether its thinking may be sent back.
      if (thinking?.length) {
        message.thinking = thinking
        if (model !== undefined) message.model = model
      }
      return message
    }
    case 'tool/result': {
      const { callId, name, content, isError } = event.data
      return { role: 'tool', callId, name, content, isError }
    }
    default:
      return undefined
  }
}

/** Rebuilds the provider-neutral conversation from session events: exactly the messages the model was sent. */
export function deriveMessages(events: readonly SessionEventBody[]): Message[] {
  const messages: Message[] = []
  for (const event of events) {
    const message = messageOf(event)
    if (message) messages.push(message)
  }
  return messages
}
