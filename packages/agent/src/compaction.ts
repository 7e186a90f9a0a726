import type { Message } from './model.js'
import { CLEARED_NOTE, summaryText } from './compaction-prompt.js'
import { formatContext } from './messages.js'
import type { CompactRecord } from './session-types.js'

type Assistant = Extract<Message, { role: 'assistant' }>

/** How much a compaction keeps and clears, in estimated tokens. */
export interface CompactionPlan {
  /** Index of the first message kept verbatim (after the system prompt and the summary). */
  keepFrom: number
  /** Call ids of bulky tool results, among the kept messages, whose content is replaced with a note. */
  cleared: string[]
}

/** Where the conversation starts after the system prompt. */
function headLength(messages: readonly Message[]): number {
  return messages[0]?.role === 'system' ? 1 : 0
}

/** The index of the last assistant turn whose tool results end the conversation (the tool-use turn in progress), or -1. */
function openTurn(messages: readonly Message[]): number {
  let index = messages.length - 1
  while (index >= 0 && messages[index]!.role === 'tool') index--
  const message = messages[index]
  return index < messages.length - 1 && message?.role === 'assistant' && message.toolCalls?.length ? index : -1
}

/**
 * Chooses what a compaction keeps: the most recent messages worth about `keepTokens`, starting at a user
 * or assistant message (a tool result never loses the call it answers), and never less than the last
 * assistant turn; tool results above `clearAbove` tokens among the kept ones, except the last turn's
 * (unless `clearLatest`: when even they do not fit), are cleared.
 */
export function planCompaction(
  messages: readonly Message[],
  estimates: readonly number[],
  keepTokens: number,
  clearAbove: number,
  clearLatest = false,
): CompactionPlan {
  const head = headLength(messages)
  let keepFrom = messages.length
  let kept = 0
  while (keepFrom > head && kept + estimates[keepFrom - 1]! <= keepTokens) kept += estimates[--keepFrom]!
  while (keepFrom < messages.length && messages[keepFrom]!.role === 'tool') keepFrom++
  // Keep at least the last assistant turn (and its results): the model must see what it just did.
  let last = messages.length - 1
  while (last > head && messages[last]!.role !== 'assistant') last--
  if (last >= head && keepFrom > last) keepFrom = last
  const latest = clearLatest ? -1 : openTurn(messages)
  const cleared: string[] = []
  for (let index = keepFrom; index < messages.length; index++) {
    const message = messages[index]!
    if (message.role === 'tool' && estimates[index]! > clearAbove && (latest < 0 || index < latest)) cleared.push(message.callId)
  }
  return { keepFrom: Math.max(head, keepFrom), cleared }
}

/**
 * The conversation after a compaction: the system prompt, the summary (as a context message; none for a
 * compaction that only cleared results), then the kept messages with the cleared results replaced by a
 * note. Kept turns lose their thinking (what came before it changed, so providers would reject or ignore
 * it), except the tool-use turn in progress, whose thinking the Anthropic API requires. Used for the live
 * conversation and by `deriveMessages`, so replay and resume see exactly what the model saw.
 */
export function applyCompaction(messages: readonly Message[], record: CompactRecord): Message[] {
  const head = messages.slice(0, headLength(messages))
  const cleared = new Set(record.cleared ?? [])
  const kept = messages.slice(Math.max(head.length, record.keepFrom))
  const latest = openTurn(kept)
  const out: Message[] = [...head]
  if (record.summary) out.push({ role: 'user', content: formatContext('compaction', summaryText(record.summary)) })
  kept.forEach((message, index) => {
    if (message.role === 'tool' && cleared.has(message.callId)) out.push({ ...message, content: [{ type: 'text', text: CLEARED_NOTE }] })
    else if (message.role === 'assistant' && message.thinking && index !== latest) out.push(withoutThinking(message))
    else out.push(message)
  })
  return out
}

function withoutThinking(message: Assistant): Assistant {
  const { thinking: _thinking, model: _model, ...rest } = message
  return rest
}
