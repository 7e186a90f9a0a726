import type { Context } from 'cordis'
import { CordageError, type ToolExecutionResult } from '@cordage/core'
import { hookTable, serviceOf, type HookTable, type ToolRegistry } from '@cordage/registry'
import { composeSystem, type AgentNotice, type AgentRequestEvent, type SystemSection } from '@cordage/services'
import type { AgentEvent, AgentOptions, AgentResult, RunOptions, StopReason } from './agent-types.js'
import { runBatch } from './batch.js'
import { codeDispatchObserver } from './code-dispatch.js'
import { NoModelError } from './errors.js'
import { observe, type RunObserver } from './hub.js'
import { messageOf, deriveMessages, formatContext } from './messages.js'
import type { CompletionRequest, Message, ModelService, ModelTool, ToolCall, Usage } from './model.js'
import { applyToolView } from './tool-view.js'
import { applyCompaction } from './compaction.js'
import { compactConversation } from './compactor.js'
import { ContextMeter, estimateToolTokens } from './context-meter.js'
import { streamTurn, type TurnOutcome } from './turn.js'
import { addUsage, costOf, emptyUsage, type UsageTotals } from './usage.js'
import type { CompactRecord, SessionEventBody, SessionEventMap, SessionEventType } from './session-types.js'

// What a run needs of its context, read once per context: a property read through the context costs
// several proxy hops (microseconds) per run, while the function it returns is bound to that context and
// stays valid for its lifetime, and its listener table is live.
interface ContextAccess {
  emit: Context['emit']
  hooks: HookTable
}
const access = new WeakMap<Context, ContextAccess>()

function contextAccess(ctx: Context): ContextAccess {
  let found = access.get(ctx)
  if (!found) access.set(ctx, (found = { emit: ctx.emit, hooks: hookTable(ctx) }))
  return found
}

/**
 * The agent loop: sends the conversation and `ctx.tools.list()` to the model, runs the tool calls it
 * proposes, commits results in model order and repeats until the model answers without calls, the
 * turn limit is reached or the signal aborts. With a `session`, every committed message is appended to
 * it, so `deriveMessages(session.events)` equals `agent.messages`.
 */
export class Agent {
  /** The conversation, exactly as the model receives it. */
  readonly messages: Message[]
  readonly session: AgentOptions['session']
  /** What tool calls carry as `exec.agent`: the `agent` option, else the session id. */
  readonly name: string | undefined
  private readonly inFlight = new Set<string>()
  /** The conversation's size in tokens, kept as messages are committed (the compaction decision reads it). */
  private readonly meter: ContextMeter
  /** The conversation length right after the last compaction: no new compaction until it grows. */
  private compactedAt = -1
  private running = false
  private idle: Promise<void> = Promise.resolve()

  constructor(
    private readonly ctx: Context,
    private readonly options: AgentOptions = {},
  ) {
    this.session = options.session
    this.name = options.agent ?? options.session?.id
    this.messages = this.session ? deriveMessages(this.session.events) : [...(options.messages ?? [])]
    this.meter = new ContextMeter(this.messages)
  }

  /** Adds `input` (if given) as a user message and runs turns until the model stops. Rejects only for model or wiring errors. */
  async run(input?: string, runOptions: RunOptions = {}): Promise<AgentResult> {
    if (this.running) throw new CordageError('AGENT_BUSY', 'this agent is already running; await the previous run first')
    const { emit, hooks } = contextAccess(this.ctx)
    // The model and the registry are used as the instances themselves, resolved as `ctx.get` resolves
    // them: a read through cordis's tracing proxy builds a proxy per run and a shadow context per method
    // call (together a fifth of a short run). Neither's methods depend on the caller's context.
    const model = this.options.model ?? serviceOf<ModelService>(this.ctx, 'model')
    if (!model) throw new NoModelError()
    const tools = serviceOf<ToolRegistry>(this.ctx, 'tools')
    if (!tools) throw new CordageError('NO_TOOLS', 'the agent needs the tools service: load @cordage/registry first')
    const lifetime = this.options.signal
    const signal = runOptions.signal && lifetime ? AbortSignal.any([runOptions.signal, lifetime]) : (runOptions.signal ?? lifetime)
    const maxTurns = runOptions.maxTurns ?? this.options.maxTurns ?? 50
    const agent = this.name
    const notices: AgentNotice[] = []
    let stopObserving: (() => void) | undefined
    let turns = 0
    let text = ''
    const tally: Tally = { usage: emptyUsage(), cost: 0 }
    // Until `finish` says otherwise, the run ends by rejecting.
    let stopped = 'failed'
    const finish = (stopReason: StopReason): AgentResult => {
      stopped = stopReason
      const { usage, cost } = tally
      const result: AgentResult = { text, stopReason, turns, usage, ...(cost !== undefined && { cost }) }
      if (this.session && !this.session.closed) this.session.append('run/end', { stopReason, turns, usage: { ...usage }, ...(cost !== undefined && { cost }) })
      return result
    }
    this.running = true
    let release!: () => void
    this.idle = new Promise((resolve) => (release = resolve))
    // Per-root-run limits (the subagent plugin's budget) follow runs by these; unheard, they cost nothing.
    const announce = (hooks['agent/run']?.length ?? 0) > 0
    try {
      if (announce) emit('agent/run', { type: 'start', agent, ...(this.session && { session: this.session.id }) })
      const observer: RunObserver = this.session ? codeDispatchObserver(this.session, (callId, owner) => owner === agent && this.inFlight.has(callId)) : {}
      // A notice for particular agents (a job's end, for the agent that started it) skips the others.
      const key = agent ?? null
      observer.onNotice = (notice) => void ((notice.audience === undefined || notice.audience.includes(key)) && notices.push(notice))
      stopObserving = observe(this.ctx, observer, this.session !== undefined)
      if (this.messages.length === 0) {
        // Plugins add their sections (a skill catalog, plan-mode rules) once, when the conversation starts.
        const sections: SystemSection[] = []
        if (hooks['agent/system']?.length) emit('agent/system', sections)
        const system = composeSystem(this.options.system, sections)
        if (system !== undefined) this.commit('system/message', { content: system })
      }
      if (input !== undefined) this.commit('user/message', { content: input })
      for (;;) {
        if (signal?.aborted) return finish('aborted')
        if (turns >= maxTurns) return finish('max-turns')
        this.appendNotices(notices)
        turns++
        this.emit({ type: 'turn/start', turn: turns })
        const offered = applyToolView(tools.list(), this.options.tools)
        if (this.needsCompaction(model, offered.schemas)) {
          try {
            await this.compactWith(model, offered.schemas, signal, 'auto', tally)
          } catch (error) {
            if (signal?.aborted) return finish('aborted')
            // A compaction that failed leaves the conversation as it was: the request may still fit, and a
            // refusal of its size compacts again below.
            this.ctx.logger('agent').warn(`compaction failed; continuing without it: ${(error as Error)?.message ?? String(error)}`)
          }
        }
        let turn: TurnOutcome
        try {
          turn = await this.requestTurn(model, offered.schemas, signal, turns)
        } catch (error) {
          // The provider refused the size: compact once and ask again.
          if ((error as { code?: string })?.code !== 'MODEL_CONTEXT_LENGTH' || signal?.aborted) throw error
          if (!(await this.compactWith(model, offered.schemas, signal, 'overflow', tally).catch(() => undefined))) {
            if (signal?.aborted) return finish('aborted')
            throw error
          }
          turn = await this.requestTurn(model, offered.schemas, signal, turns)
        }
        const turnCost = charge(tally, turn.usage, model)
        this.reportUsage(model, 'turn', turn.usage, turnCost)
        if (turn.aborted && !turn.text && !turn.calls.length) return finish('aborted')
        const data: SessionEventMap['assistant/message'] = {
          content: turn.text,
          ...(turn.calls.length && { toolCalls: turn.calls }),
          ...(turn.thinking.length && { thinking: turn.thinking }),
          model: model.id,
          finishReason: turn.finishReason,
        }
        if (turn.usage) data.usage = turn.usage
        if (turnCost !== undefined) data.cost = turnCost
        const message = this.commit('assistant/message', data) as Extract<Message, { role: 'assistant' }>
        text = turn.text
        this.emit({ type: 'assistant/message', message, finishReason: turn.finishReason, ...(turn.usage && { usage: turn.usage }) })
        if (!turn.calls.length) {
          this.emit({ type: 'turn/end', turn: turns })
          return finish(turn.aborted ? 'aborted' : turn.finishReason === 'length' ? 'length' : 'completed')
        }
        await this.runCalls(tools, turn.calls, signal, offered.names)
        this.emit({ type: 'turn/end', turn: turns })
        if (runOptions.until?.()) return finish('completed')
        // Every line is already in the kernel (a process crash loses nothing); the fsync, for OS
        // crashes, runs alongside the next model request, unless the run ends first and its own covers it.
        this.session?.syncSoon(undefined, (error: unknown) =>
          this.ctx.logger('agent').warn(`session fsync failed: ${(error as Error)?.message ?? String(error)}`),
        )
      }
    } finally {
      if (announce) emit('agent/run', { type: 'end', agent, ...(this.session && { session: this.session.id }), stopReason: stopped })
      stopObserving?.()
      // A job that finished during the last turn is kept for the next request rather than lost.
      if (notices.length && !this.session?.closed) this.appendNotices(notices)
      this.running = false
      release()
      await this.session?.sync().catch((error: unknown) => this.ctx.logger('agent').warn(`session fsync failed: ${(error as Error)?.message ?? String(error)}`))
    }
  }

  /**
   * Compacts the conversation now (`/compact` in chat): the model summarizes it and the conversation
   * continues from the summary and the recent messages. Resolves to the logged record, or undefined when
   * there is nothing to compact yet. Not while a run is in progress (`AGENT_BUSY`).
   */
  async compact(options: { focus?: string; signal?: AbortSignal } = {}): Promise<CompactRecord | undefined> {
    if (this.running) throw new CordageError('AGENT_BUSY', 'this agent is running; compact between runs')
    const model = this.options.model ?? serviceOf<ModelService>(this.ctx, 'model')
    if (!model) throw new NoModelError()
    const tools = serviceOf<ToolRegistry>(this.ctx, 'tools')
    const offered = tools ? applyToolView(tools.list(), this.options.tools).schemas : []
    if (this.messages.filter((message) => message.role !== 'system').length < 2) return undefined
    this.running = true
    try {
      return await this.compactWith(model, offered, options.signal, 'manual', { usage: emptyUsage(), cost: 0 }, options.focus)
    } finally {
      this.running = false
    }
  }

  /** Whether the next request would reach the compaction threshold of the model's window (constant time). */
  private needsCompaction(model: ModelService, tools: readonly ModelTool[]): boolean {
    const options = this.options.compaction ?? {}
    const window = options.contextWindow ?? model.info?.contextWindow
    if (options.auto === false || !window || this.messages.length === this.compactedAt) return false
    return this.meter.estimate(estimateToolTokens(tools)) >= (options.threshold ?? 0.8) * window
  }

  /** Summarizes, logs the `session/compact` record (one line: a crash before it loses nothing) and rewrites the conversation. */
  private async compactWith(
    model: ModelService,
    tools: readonly ModelTool[],
    signal: AbortSignal | undefined,
    reason: CompactRecord['reason'],
    tally: Tally,
    focus?: string,
  ): Promise<CompactRecord | undefined> {
    const tokens = this.meter.estimate(estimateToolTokens(tools))
    this.emit({ type: 'compact/start', reason, tokens })
    const record = await compactConversation({
      model,
      tools,
      messages: this.messages,
      estimates: this.meter.estimates,
      options: this.options.compaction ?? {},
      reason,
      tokensBefore: tokens,
      ...(focus && { focus }),
      signal,
    })
    this.compactedAt = this.messages.length
    if (!record) return undefined
    this.reportUsage(model, 'compaction', record.usage, charge(tally, record.usage, model))
    this.session?.append('session/compact', record)
    const head = this.messages[0]?.role === 'system' ? 1 : 0
    this.messages.splice(0, this.messages.length, ...applyCompaction(this.messages, record))
    this.meter.reset(this.messages)
    this.compactedAt = this.messages.length
    const compacted = {
      reason,
      tokensBefore: record.tokensBefore,
      tokensAfter: record.tokensAfter,
      summarized: record.keepFrom - head,
      cleared: record.cleared?.length ?? 0,
    }
    this.emit({ type: 'compact', ...compacted })
    const { emit, hooks } = contextAccess(this.ctx)
    if (hooks['agent/compact']?.length) emit('agent/compact', { ...(this.name !== undefined && { agent: this.name }), ...compacted })
    await this.session?.sync()
    return record
  }

  /** Emits `agent/usage` for one request, when someone listens (a run budget). */
  private reportUsage(model: ModelService, purpose: 'turn' | 'compaction', usage: Usage | undefined, cost: number | undefined): void {
    const { emit, hooks } = contextAccess(this.ctx)
    if (!hooks['agent/usage']?.length) return
    emit('agent/usage', {
      ...(this.name !== undefined && { agent: this.name }),
      model: model.id,
      purpose,
      ...(usage && { usage }),
      ...(cost !== undefined && { cost }),
    })
  }

  /** One model request; its reported prompt size recalibrates the meter. */
  private async requestTurn(model: ModelService, tools: readonly ModelTool[], signal: AbortSignal | undefined, turn: number): Promise<TurnOutcome> {
    const count = this.messages.length
    const request: CompletionRequest = { messages: [...this.messages], tools: [...tools], signal }
    const { emit, hooks } = contextAccess(this.ctx)
    // Telemetry follows requests by these; unheard, they cost nothing.
    const traced = (hooks['agent/request']?.length ?? 0) > 0
    const about = traced ? requestOf(this.name, model, request) : undefined
    if (about) emit('agent/request', { type: 'start', ...about })
    let outcome: TurnOutcome
    try {
      outcome = await streamTurn(
        model,
        request,
        turn,
        (delta) => this.emit({ type: 'text/delta', delta }),
        (delta) => this.emit({ type: 'thinking/delta', delta }),
      )
    } catch (error) {
      if (about) emit('agent/request', { type: 'end', ...about, error })
      throw error
    }
    if (about) {
      const end: AgentRequestEvent = { type: 'end', ...about, finishReason: outcome.finishReason, text: outcome.text, toolCalls: outcome.calls }
      if (outcome.usage) end.usage = outcome.usage
      emit('agent/request', end)
    }
    if (outcome.usage) this.meter.report(count, outcome.usage.inputTokens)
    return outcome
  }

  /** Resolves once no run of this agent is in progress (its calls settled and its lines written). */
  whenIdle(): Promise<void> {
    return this.idle
  }

  private async runCalls(tools: ToolRegistry, calls: ToolCall[], signal: AbortSignal | undefined, offered: ReadonlySet<string> | undefined): Promise<void> {
    for (const call of calls) this.inFlight.add(call.id)
    let results: ToolExecutionResult[]
    try {
      results = await runBatch(
        {
          tools,
          signal,
          agent: this.name,
          offered,
          emit: (event) => this.emit(event),
          commit: (call, result) => this.commitResult(call, result),
        },
        calls,
      )
    } finally {
      for (const call of calls) this.inFlight.delete(call.id)
    }
    for (const result of results) {
      for (const context of result.additionalContexts ?? []) this.appendContext(context.source, context.text)
    }
  }

  private commitResult(call: ToolCall, result: ToolExecutionResult): void {
    const data: SessionEventMap['tool/result'] = { callId: call.id, name: call.name, content: result.content, isError: result.isError }
    if (result.isError) {
      const code = result.error.info?.code
      data.error = code === undefined ? { message: result.error.message } : { message: result.error.message, code }
    }
    if (result.meta !== undefined) data.meta = result.meta
    this.commit('tool/result', data)
  }

  private appendNotices(notices: AgentNotice[]): void {
    for (const notice of notices.splice(0)) this.appendContext(notice.source, notice.text)
  }

  private appendContext(source: string, text: string): void {
    const content = formatContext(source, text)
    this.commit('user/message', { content, source })
    this.emit({ type: 'context', source, content })
  }

  /** Appends the event to the session (if any) and its message to the conversation. */
  private commit<T extends SessionEventType>(type: T, data: SessionEventMap[T]): Message | undefined {
    const event = this.session ? this.session.append(type, data) : ({ type, data } as { type: T; data: SessionEventMap[T] })
    const message = messageOf(event as SessionEventBody)
    if (message) {
      this.messages.push(message)
      this.meter.add(message)
    }
    return message
  }

  private emit(event: AgentEvent): void {
    const listener = this.options.onEvent
    if (!listener) return
    try {
      listener(event)
    } catch (error) {
      this.ctx.logger('agent').warn(`an onEvent listener failed (ignored): ${(error as Error)?.message ?? String(error)}`)
    }
  }
}

/** What the start and end events of one model request share. */
function requestOf(agent: string | undefined, model: ModelService, request: CompletionRequest): Omit<AgentRequestEvent, 'type'> {
  const about: Omit<AgentRequestEvent, 'type'> = { model: model.id, request }
  if (agent !== undefined) about.agent = agent
  if (model.info?.model) about.modelName = model.info.model
  return about
}

/** A run's usage and cost so far; `cost` becomes undefined once one request's usage or price is unknown. */
interface Tally {
  usage: UsageTotals
  cost: number | undefined
}

/** Adds one request's usage to the run's tally; returns that request's cost (undefined when unknown). */
function charge(tally: Tally, usage: Usage | undefined, model: ModelService): number | undefined {
  const cost = usage ? costOf(usage, model.info?.price) : undefined
  if (usage) addUsage(tally.usage, usage)
  // A partial sum would understate the cost: one unknown makes the total unknown.
  tally.cost = tally.cost === undefined || cost === undefined ? undefined : tally.cost + cost
  return cost
}
