import { applyCompaction } from './compaction.js'
import type { Message, ToolCall } from './model.js'
import type { SessionEventBody } from './session-types.js'

/** Formats one injected context as the user-role message text the model receives. */
export function formatContext(source: string, text: string): string {
  return `<context source="${source}">\n${text}\n</context>`
}

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

/** The calls of the conversation's last model turn that no tool message answers yet. */
export function unansweredCalls(messages: readonly Message[]): ToolCall[] {
  const last = messages.findLastIndex((message) => message.role === 'assistant')
  const turn = messages[last]
  if (last < 0 || turn.role !== 'assistant' || !turn.toolCalls?.length) return []
  const answered = new Set(messages.slice(last + 1).flatMap((message) => (message.role === 'tool' ? [message.callId] : [])))
  return turn.toolCalls.filter((call) => !answered.has(call.id))
}

/** Rebuilds the provider-neutral conversation from session events: exactly the messages the model was sent. */
export function deriveMessages(events: readonly SessionEventBody[]): Message[] {
  let messages: Message[] = []
  for (const event of events) {
    // A compaction rewrites what came before it, exactly as the live conversation was rewritten.
    if (event.type === 'session/compact') messages = applyCompaction(messages, event.data)
    else {
      const message = messageOf(event)
      if (message) messages.push(message)
    }
  }
  return messages
}
