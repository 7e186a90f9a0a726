import { CordageError } from '@cordage/core'
import { applyCompaction, planCompaction } from './compaction.js'
import { COMPACTION_PROMPT } from './compaction-prompt.js'
import { estimateTokens, estimateToolTokens } from './context-meter.js'
import type { Message, ModelService, ModelTool } from './model.js'
import type { CompactRecord } from './session-types.js'
import { streamTurn } from './turn.js'
import { costOf } from './usage.js'

/** When and how the agent compacts its conversation. */
export interface CompactionOptions {
  /** `false` never compacts on its own (a `MODEL_CONTEXT_LENGTH` failure still does, and `compact()` works). Default true. */
  auto?: boolean
  /** Compact when a request would reach this share of the context window; default 0.8. */
  threshold?: number
  /** The model's window in tokens; default the model's `info.contextWindow` (without one, no automatic compaction). */
  contextWindow?: number
  /** Recent messages kept verbatim, in tokens; default a fifth of the window (a manual compaction: only the last turn). */
  keepTokens?: number
  /** Kept tool results larger than this (tokens) are cleared, except the last turn's; default 1000. */
  clearAbove?: number
}

/** What one compaction needs: the conversation, its per-message estimates, and the model that summarizes it. */
export interface CompactInput {
  model: ModelService
  tools: readonly ModelTool[]
  messages: readonly Message[]
  estimates: readonly number[]
  options: CompactionOptions
  reason: CompactRecord['reason']
  tokensBefore: number
  /** What the summary should focus on (`/compact <focus>`). */
  focus?: string
  signal?: AbortSignal
}

const sumOf = (messages: readonly Message[]) => messages.reduce((sum, message) => sum + estimateTokens(message), 0)

/**
 * Asks the model for a summary of the conversation (same system prompt and tools, so the provider's
 * prompt cache still applies; the model is told not to call them) and returns the record that rewrites
 * the conversation: summary + the recent messages, bulky old results cleared. When the model refuses the
 * size, it tries again with every earlier tool result cleared, then with the older half dropped.
 */
export async function compactConversation(input: CompactInput): Promise<CompactRecord | undefined> {
  const { model, messages, options } = input
  const window = options.contextWindow ?? model.info?.contextWindow
  const keepTokens = options.keepTokens ?? (input.reason === 'manual' || !window ? 0 : Math.floor(window / 5))
  const clearAbove = options.clearAbove ?? 1000
  let plan = planCompaction(messages, input.estimates, keepTokens, clearAbove)
  const budget = (window ?? Infinity) * (options.threshold ?? 0.8)
  // When even the last turn's results would not fit (or the provider already refused the size), they are
  // cleared too: the model can read again what it needs.
  const after = (record: Pick<CompactRecord, 'keepFrom' | 'cleared'>) =>
    sumOf(applyCompaction(messages, { ...record, summary: 'x', reason: input.reason, tokensBefore: 0, tokensAfter: 0 }))
  if (input.reason === 'overflow' || after(plan) + estimateToolTokens(input.tools) > budget)
    plan = planCompaction(messages, input.estimates, keepTokens, clearAbove, true)
  // Nothing older than the turn that must stay, and nothing to clear: a compaction would only add a summary.
  if (plan.keepFrom <= (messages[0]?.role === 'system' ? 1 : 0) && !plan.cleared.length) return undefined
  const prompt: Message = { role: 'user', content: input.focus ? `${COMPACTION_PROMPT}\n\nFocus the summary on: ${input.focus}` : COMPACTION_PROMPT }
  const head = messages[0]?.role === 'system' ? 1 : 0
  const allResults = messages.flatMap((message) => (message.role === 'tool' ? [message.callId] : []))
  const lean = applyCompaction(messages, { summary: '', keepFrom: head, cleared: allResults, reason: input.reason, tokensBefore: 0, tokensAfter: 0 })
  const tools = estimateToolTokens(input.tools)
  const recent = lean.slice(head + Math.floor((lean.length - head) / 2)).filter(startsAtTurn())
  const omitted: Message = { role: 'user', content: '(The earlier part of this conversation is omitted here.)' }
  const attempts: Message[][] = [[...messages], lean, [...lean.slice(0, head), omitted, ...recent]]
  // Skip what cannot fit: the prompt plus the answer must stay inside the window.
  const fits = (candidate: Message[]) => !window || sumOf(candidate) + tools + estimateTokens(prompt) < window * 0.9
  let start = attempts.findIndex(fits)
  if (start < 0) start = attempts.length - 1
  let failure: unknown
  for (const candidate of attempts.slice(start)) {
    try {
      const turn = await streamTurn(
        model,
        { messages: [...candidate, prompt], tools: [...input.tools], signal: input.signal, purpose: 'compaction' },
        0,
        () => {},
      )
      if (turn.aborted) throw new CordageError('ABORTED', 'the compaction was cancelled')
      const summary = turn.text.trim()
      if (!summary) throw new CordageError('COMPACTION_FAILED', `the model ${model.id} answered the compaction request without a summary`)
      const record: CompactRecord = {
        summary,
        keepFrom: plan.keepFrom,
        cleared: plan.cleared,
        reason: input.reason,
        tokensBefore: input.tokensBefore,
        tokensAfter: 0,
      }
      if (turn.usage) {
        record.usage = turn.usage
        const cost = costOf(turn.usage, model.info?.price)
        if (cost !== undefined) record.cost = cost
      }
      record.tokensAfter = sumOf(applyCompaction(messages, record)) + tools
      return record
    } catch (error) {
      if ((error as { code?: string })?.code !== 'MODEL_CONTEXT_LENGTH') throw error
      failure = error
    }
  }
  throw failure
}

/** Drops leading messages until the list starts at a user or assistant message (a tool result needs its call). */
function startsAtTurn(): (message: Message) => boolean {
  let started = false
  return (message) => (started ||= message.role !== 'tool')
}
