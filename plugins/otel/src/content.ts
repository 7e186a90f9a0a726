import type { ContentBlock, JsonValue } from '@cordage/core'
import type { Message, ToolCall } from '@cordage/services'

/** Cuts `text` to at most `max` UTF-16 units, saying how much was left out. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text
  return `${text.slice(0, max)}… (${text.length - max} more characters not recorded)`
}

/** A tool call's arguments as recorded (`gen_ai.tool.call.arguments`): what the caller sent, as JSON. */
export function argumentsText(args: JsonValue, max: number): string {
  return bounded(JSON.stringify(args), max)
}

/**
 * A tool call's result as recorded (`gen_ai.tool.call.result`): its content after every policy decision
 * and the presentation phase, the text the model reads. Never the canonical value, which a policy may
 * have redacted from the content only by replacing it.
 */
export function resultText(content: readonly ContentBlock[], max: number): string {
  const parts: string[] = []
  for (const block of content) {
    if (block.type === 'text') parts.push(block.text)
    else if (block.type === 'image') parts.push(`[image ${block.mimeType}]`)
    else parts.push(block.text ?? `[resource ${block.uri}]`)
  }
  return bounded(parts.join('\n'), max)
}

/** The messages of a model request in the conventions' shape (`gen_ai.input.messages`), as JSON. */
export function inputMessagesText(messages: readonly Message[], max: number): string {
  const shaped = messages.map((message) => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, parts: [{ type: 'text', content: message.content }] }
      case 'assistant':
        return { role: 'assistant', parts: [...textPart(message.content), ...(message.toolCalls ?? []).map(callPart)] }
      case 'tool':
        return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.callId, response: resultText(message.content, max) }] }
    }
  })
  return bounded(JSON.stringify(shaped), max)
}

/** The model's answer in the conventions' shape (`gen_ai.output.messages`), as JSON. */
export function outputMessagesText(text: string, calls: readonly ToolCall[], finishReason: string | undefined, max: number): string {
  const message = { role: 'assistant', parts: [...textPart(text), ...calls.map(callPart)], ...(finishReason && { finish_reason: finishReason }) }
  return bounded(JSON.stringify([message]), max)
}

function textPart(text: string): { type: 'text'; content: string }[] {
  return text ? [{ type: 'text', content: text }] : []
}

function callPart(call: ToolCall): { type: 'tool_call'; id: string; name: string; arguments: string } {
  return { type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments }
}
