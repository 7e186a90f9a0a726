import type { Context } from 'cordis'
import { CordageError, errorMessage } from '@cordage/core'
import type { AgentRequestEvent } from '@cordage/services'
import { contextAccess } from './context-access.js'
import { ModelError } from './errors.js'
import type { CompletionRequest, ModelService, ThinkingBlock, ToolCall, Usage } from './model.js'

/** One streamed model turn, assembled. `aborted` is set when the signal cut the stream short. */
export interface TurnOutcome {
  text: string
  calls: ToolCall[]
  /** Reasoning blocks in the order the model produced them (empty when it sent none). */
  thinking: ThinkingBlock[]
  finishReason: string
  usage?: Usage
  aborted: boolean
}

/**
 * Consumes one `model.stream(...)`: forwards text deltas, collects tool calls (a missing or repeated call
 * id is replaced with `call_<turn>_<index>`, so results can always be matched), and requires the closing
 * `done`. An abort ends the turn with what arrived; any other stream failure rejects.
 */
export async function streamTurn(
  model: ModelService,
  request: CompletionRequest,
  turn: number,
  onDelta: (delta: string) => void,
  onThinking?: (delta: string) => void,
): Promise<TurnOutcome> {
  let text = ''
  const calls: ToolCall[] = []
  const thinking: ThinkingBlock[] = []
  const ids = new Set<string>()
  let done: { finishReason: string; usage?: Usage } | undefined
  try {
    for await (const event of model.stream(request)) {
      // Stop reading even if a provider ignores the signal; `break` closes its iterator.
      if (request.signal?.aborted) break
      if (event.type === 'text') {
        if (!event.delta) continue
        text += event.delta
        onDelta(event.delta)
      } else if (event.type === 'thinking') {
        if (event.delta) onThinking?.(event.delta)
      } else if (event.type === 'thinking-block') {
        const { text: reasoning, signature, redacted } = event.block
        thinking.push({ text: String(reasoning ?? ''), ...(signature !== undefined && { signature }), ...(redacted !== undefined && { redacted }) })
      } else if (event.type === 'tool-call') {
        const { id, name, arguments: args } = event.call
        const callId = typeof id === 'string' && id && !ids.has(id) ? id : `call_${turn}_${calls.length}`
        ids.add(callId)
        calls.push({ id: callId, name: String(name), arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) })
      } else if (event.type === 'done') {
        done = event.usage ? { finishReason: event.finishReason, usage: event.usage } : { finishReason: event.finishReason }
        break
      }
    }
  } catch (error) {
    if (request.signal?.aborted) return { text, calls, thinking, finishReason: 'aborted', aborted: true }
    if (CordageError.is(error)) throw error
    throw new ModelError(`the model ${model.id} failed: ${errorMessage(error)}`, { cause: error })
  }
  if (request.signal?.aborted) return { text, calls, thinking, finishReason: 'aborted', aborted: true, ...(done?.usage && { usage: done.usage }) }
  if (!done) throw new ModelError(`the model ${model.id} ended its stream without a done event`)
  return { text, calls, thinking, ...done, aborted: false }
}

/** `streamTurn`, announced on `agent/request` (start, then end with the outcome or the error) while someone listens. */
export async function tracedTurn(
  ctx: Context,
  agent: string | undefined,
  model: ModelService,
  request: CompletionRequest,
  turn: number,
  onDelta: (delta: string) => void,
  onThinking: (delta: string) => void,
): Promise<TurnOutcome> {
  const { emit, hooks } = contextAccess(ctx)
  // Telemetry follows requests by these; unheard, they cost nothing.
  const about = hooks['agent/request']?.length ? requestOf(agent, model, request) : undefined
  if (about) emit('agent/request', { type: 'start', ...about })
  let outcome: TurnOutcome
  try {
    outcome = await streamTurn(model, request, turn, onDelta, onThinking)
  } catch (error) {
    if (about) emit('agent/request', { type: 'end', ...about, error })
    throw error
  }
  if (about) {
    const end: AgentRequestEvent = { type: 'end', ...about, finishReason: outcome.finishReason, text: outcome.text, toolCalls: outcome.calls }
    if (outcome.usage) end.usage = outcome.usage
    emit('agent/request', end)
  }
  return outcome
}

/** What the start and end events of one model request share. */
function requestOf(agent: string | undefined, model: ModelService, request: CompletionRequest): Omit<AgentRequestEvent, 'type'> {
  const about: Omit<AgentRequestEvent, 'type'> = { model: model.id, request }
  if (agent !== undefined) about.agent = agent
  if (model.info?.model) about.modelName = model.info.model
  return about
}
