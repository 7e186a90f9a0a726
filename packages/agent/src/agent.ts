import type { Context } from 'cordis'
import { CordageError, errorMessage, type ToolExecutionResult } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import { serviceOf } from '@cordage/registry/cordis-seam'
import { composeSystem, type AgentNotice, type SystemSection } from '@cordage/services'
import type { AgentEvent, AgentOptions, AgentResult, RunOptions, StopReason } from './agent-types.js'
import { runBatch } from './batch.js'
import { codeDispatchObserver } from './code-dispatch.js'
import { NoModelError } from './errors.js'
import { observe, type RunObserver } from './hub.js'
import { messageOf, deriveMessages, formatContext, unansweredCalls } from './messages.js'
import type { CompletionRequest, Message, ModelService, ModelTool, ToolCall, Usage } from './model.js'
import { applyToolView } from './tool-view.js'
import { applyCompaction } from './compaction.js'
import { compactConversation } from './compactor.js'
import { ContextMeter, estimateToolTokens } from './context-meter.js'
import { tracedTurn, type TurnOutcome } from './turn.js'
import { contextAccess } from './context-access.js'
import { charge, type RunState, type Tally } from './run-state.js'
import { emptyUsage } from './usage.js'
import type { CompactRecord, SessionEventBody, SessionEventMap, SessionEventType } from './session-types.js'

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

  /**
   * Adds `input` (if given) as a user message and runs turns until the model stops. Rejects only for model or wiring errors.
   * The phases: begin (resolve the model and registry), announce and observe, open the conversation, turns, finish, end.
   */
  async run(input?: string, runOptions: RunOptions = {}): Promise<AgentResult> {
    if (this.running) throw new CordageError('AGENT_BUSY', 'this agent is already running; await the previous run first')
    const run = this.begin(runOptions)
    const { emit } = contextAccess(this.ctx)
    const about = { agent: this.name, ...(this.session && { session: this.session.id }) }
    try {
      if (run.announced) emit('agent/run', { type: 'start', ...about })
      this.observeRun(run)
      this.open(input)
      if (runOptions.finishCalls && input === undefined) await this.finishCalls(run)
      for (;;) {
        const stop = await this.turn(run)
        if (stop) return this.finish(run, stop)
      }
    } finally {
      if (run.announced) emit('agent/run', { type: 'end', ...about, stopReason: run.stopped })
      await this.end(run)
    }
  }

  /** Resolves what the run uses and marks the agent running. */
  private begin(runOptions: RunOptions): RunState {
    // The model and the registry are used as the instances themselves, resolved as `ctx.get` resolves
    // them: a read through cordis's tracing proxy builds a proxy per run and a shadow context per method
    // call. Neither's methods depend on the caller's context.
    const model = this.options.model ?? serviceOf<ModelService>(this.ctx, 'model')
    if (!model) throw new NoModelError()
    const tools = serviceOf<ToolRegistry>(this.ctx, 'tools')
    if (!tools) throw new CordageError('NO_TOOLS', 'the agent needs the tools service: load @cordage/registry first')
    const lifetime = this.options.signal
    const signal = runOptions.signal && lifetime ? AbortSignal.any([runOptions.signal, lifetime]) : (runOptions.signal ?? lifetime)
    const { hooks } = contextAccess(this.ctx)
    this.running = true
    let release!: () => void
    this.idle = new Promise((resolve) => (release = resolve))
    return {
      model,
      tools,
      signal,
      maxTurns: runOptions.maxTurns ?? this.options.maxTurns ?? 50,
      until: runOptions.until,
      // Per-root-run limits (the subagent plugin's budget) follow runs by these; unheard, they cost nothing.
      announced: (hooks['agent/run']?.length ?? 0) > 0,
      notices: [],
      turns: 0,
      text: '',
      tally: { usage: emptyUsage(), cost: 0 },
      stopped: 'failed',
      release,
      stopObserving: undefined,
    }
  }

  /** Follows the run's code dispatches (with a session) and queues the notices meant for this agent. */
  private observeRun(run: RunState): void {
    const agent = this.name
    const observer: RunObserver = this.session ? codeDispatchObserver(this.session, (callId, owner) => owner === agent && this.inFlight.has(callId)) : {}
    // A notice for particular agents (a job's end, for the agent that started it) skips the others.
    const key = agent ?? null
    observer.onNotice = (notice) => void ((notice.audience === undefined || notice.audience.includes(key)) && run.notices.push(notice))
    run.stopObserving = observe(this.ctx, observer, this.session !== undefined)
  }

  /** A new conversation starts with the system prompt and the sections plugins add to it; then the input, if any. */
  private open(input: string | undefined): void {
    if (this.messages.length === 0) {
      // Plugins add their sections (a skill catalog, plan-mode rules) once, when the conversation starts.
      const { emit, hooks } = contextAccess(this.ctx)
      const sections: SystemSection[] = []
      if (hooks['agent/system']?.length) emit('agent/system', sections)
      const system = composeSystem(this.options.system, sections)
      if (system !== undefined) this.commit('system/message', { content: system })
    }
    if (input !== undefined) this.commit('user/message', { content: input })
  }

  /** The calls of the last model turn that have no result yet run now, as that turn's calls would have. */
  private async finishCalls(run: RunState): Promise<void> {
    await this.runCalls(run.tools, unansweredCalls(this.messages), run.signal, applyToolView(run.tools.list(), this.options.tools).names)
  }

  /** One turn: queued notices, compaction when due, the model request, its answer, its tool calls. Returns why the run stops, if it does. */
  private async turn(run: RunState): Promise<StopReason | undefined> {
    if (run.signal?.aborted) return 'aborted'
    if (run.turns >= run.maxTurns) return 'max-turns'
    this.appendNotices(run.notices)
    const turn = ++run.turns
    this.emit({ type: 'turn/start', turn })
    const offered = applyToolView(run.tools.list(), this.options.tools)
    if (!(await this.compactIfDue(run, offered.schemas))) return 'aborted'
    const answer = await this.request(run, offered.schemas, turn)
    if (!answer) return 'aborted'
    const cost = charge(run.tally, answer.usage, run.model)
    this.reportUsage(run.model, 'turn', answer.usage, cost)
    if (answer.aborted && !answer.text && !answer.calls.length) return 'aborted'
    this.commitAnswer(run, answer, cost)
    if (!answer.calls.length) {
      this.emit({ type: 'turn/end', turn })
      return answer.aborted ? 'aborted' : answer.finishReason === 'length' ? 'length' : 'completed'
    }
    await this.runCalls(run.tools, answer.calls, run.signal, offered.names)
    this.emit({ type: 'turn/end', turn })
    if (run.until?.()) return 'completed'
    // Every line is already in the kernel (a process crash loses nothing); the fsync, for OS
    // crashes, runs alongside the next model request, unless the run ends first and its own covers it.
    this.session?.syncSoon(undefined, (error: unknown) => this.ctx.logger('agent').warn(`session fsync failed: ${errorMessage(error)}`))
    return undefined
  }

  /** Compacts before the request when the conversation reaches the threshold. False when the run was aborted meanwhile. */
  private async compactIfDue(run: RunState, tools: readonly ModelTool[]): Promise<boolean> {
    if (!this.needsCompaction(run.model, tools)) return true
    try {
      await this.compactWith(run.model, tools, run.signal, 'auto', run.tally)
    } catch (error) {
      if (run.signal?.aborted) return false
      // A compaction that failed leaves the conversation as it was: the request may still fit, and a
      // refusal of its size compacts again (see `request`).
      this.ctx.logger('agent').warn(`compaction failed; continuing without it: ${errorMessage(error)}`)
    }
    return true
  }

  /** The model request; when the provider refuses the conversation's size, compacts once and asks again. Undefined when the run was aborted meanwhile. */
  private async request(run: RunState, tools: readonly ModelTool[], turn: number): Promise<TurnOutcome | undefined> {
    try {
      return await this.requestTurn(run.model, tools, run.signal, turn)
    } catch (error) {
      if ((error as { code?: string })?.code !== 'MODEL_CONTEXT_LENGTH' || run.signal?.aborted) throw error
      if (!(await this.compactWith(run.model, tools, run.signal, 'overflow', run.tally).catch(() => undefined))) {
        if (run.signal?.aborted) return undefined
        throw error
      }
    }
    return this.requestTurn(run.model, tools, run.signal, turn)
  }

  /** Commits the model's answer (with the request's usage and cost) and announces it. */
  private commitAnswer(run: RunState, answer: TurnOutcome, cost: number | undefined): void {
    const data: SessionEventMap['assistant/message'] = {
      content: answer.text,
      ...(answer.calls.length && { toolCalls: answer.calls }),
      ...(answer.thinking.length && { thinking: answer.thinking }),
      model: run.model.id,
      finishReason: answer.finishReason,
    }
    if (answer.usage) data.usage = answer.usage
    if (cost !== undefined) data.cost = cost
    const message = this.commit('assistant/message', data) as Extract<Message, { role: 'assistant' }>
    run.text = answer.text
    this.emit({ type: 'assistant/message', message, finishReason: answer.finishReason, ...(answer.usage && { usage: answer.usage }) })
  }

  /** The run's result, also logged as its `run/end` record. */
  private finish(run: RunState, stopReason: StopReason): AgentResult {
    run.stopped = stopReason
    const { usage, cost } = run.tally
    const priced = cost !== undefined && { cost }
    if (this.session && !this.session.closed) this.session.append('run/end', { stopReason, turns: run.turns, usage: { ...usage }, ...priced })
    return { text: run.text, stopReason, turns: run.turns, usage, ...priced }
  }

  /** However the run ended: stops observing, keeps undelivered notices, marks the agent idle and settles the session (its `durability`). */
  private async end(run: RunState): Promise<void> {
    run.stopObserving?.()
    // A job that finished during the last turn is kept for the next request rather than lost.
    if (run.notices.length && !this.session?.closed) this.appendNotices(run.notices)
    this.running = false
    run.release()
    const warn = (error: unknown) => this.ctx.logger('agent').warn(`session fsync failed: ${errorMessage(error)}`)
    await this.session?.settle(warn).catch(warn)
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
    const outcome = await tracedTurn(
      this.ctx,
      this.name,
      model,
      request,
      turn,
      (delta) => this.emit({ type: 'text/delta', delta }),
      (delta) => this.emit({ type: 'thinking/delta', delta }),
    )
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
      this.ctx.logger('agent').warn(`an onEvent listener failed (ignored): ${errorMessage(error)}`)
    }
  }
}
