import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context as TraceContext, type Span, type Tracer } from '@opentelemetry/api'
import type { ToolExec, ToolExecutionResult } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { AgentCompactEvent, AgentRequestEvent, AgentRunEvent, ChildRunEvent, CompletionRequest } from '@cordage/services'
import { argumentsText, bounded, inputMessagesText, outputMessagesText, resultText } from './content.js'
import { ToolCounts, type Instruments } from './instruments.js'
import * as attr from './semconv.js'

/**
 * A call the registry refused as `UNKNOWN_TOOL` carries whatever name its caller sent (an MCP client, a
 * model): its span shows the name cut at the registry's longest tool name, and its metrics count it under
 * this one name, which no registered tool can have. Call ids are the caller's too (`mcp_<request id>`).
 */
const UNKNOWN_TOOL_NAME = '(unknown)'
const MAX_TOOL_NAME = 64
const MAX_CALL_ID = 256

/** What the tracker records beyond the spans' structure. */
export interface TrackerOptions {
  /** Record message and tool content (post-policy only). */
  captureContent: boolean
  /** Characters of one content attribute at most. */
  maxContentLength: number
  /** `gen_ai.agent.name` of top-level runs. */
  agentName: string
}

/** A tool call in flight: its span, the context its body and nested calls run in, when it began. */
interface ToolRecord {
  span: Span
  context: TraceContext
  exec: ToolExec
  started: number
  /** Whether the body ran (the `tools/execute` phase was reached). */
  ran: boolean
}

interface RunRecord {
  span: Span
  context: TraceContext
  conversation?: string
}

interface RequestRecord {
  span: Span
  started: number
  attributes: Attributes
}

/**
 * Turns the pipeline's and the agent loop's events into spans and measurements. Nesting is explicit:
 * a nested call's span is a child of the call whose token it carries as `exec.parent`; a tool call's of
 * the run of its `exec.agent`; a child run's of the tool call that started it (`agent/child`'s
 * `parentCallId`); a model request's of its run. Only what has no such parent (a top-level run, a
 * direct call outside any run) takes the active context, which is how a caller's trace, a worker's
 * extracted carrier or an MCP request's `traceparent` is continued.
 */
export class Tracker {
  private readonly tools = new Map<symbol, ToolRecord>()
  private readonly runs = new Map<string | null, RunRecord[]>()
  private readonly children = new Map<string, ChildRunEvent>()
  private readonly requests = new Map<CompletionRequest, RequestRecord>()
  /** Call counts by tool and outcome (the `cordage.tool.calls` observable counter reads them). */
  readonly counts = new ToolCounts({ tool: attr.ATTR_GEN_AI_TOOL_NAME, outcome: attr.ATTR_TOOL_OUTCOME })
  private readonly spanNames = new Map<string, string>()

  constructor(
    private readonly tracer: Tracer,
    /** Replaced once a meter provider is registered. */
    public instruments: Instruments,
    private readonly options: TrackerOptions,
  ) {}

  /** `tools/execute` (outermost): the span starts as the body is reached, and the body runs in its context. */
  readonly aroundBody = (exec: ToolExec, next: () => ReturnType<ToolRegistry['execute']>): ReturnType<ToolRegistry['execute']> => {
    const record = this.startTool(exec)
    record.ran = true
    return context.with(record.context, next)
  }

  /** `tools/result`: the call's final result (after policy and presentation) ends its span. */
  readonly onResult = (exec: ToolExec, result: ToolExecutionResult): void => {
    const code = result.isError ? (result.error.info?.code ?? 'TOOL_FAILED') : undefined
    const unknown = code === 'UNKNOWN_TOOL'
    // A call refused before its body (bad arguments, a denial, an unknown tool) gets its span here.
    const record = this.tools.get(exec.token) ?? this.startTool(exec, unknown)
    this.tools.delete(exec.token)
    const { span } = record
    const outcome = outcomeOf(result)
    const decision = code === 'DENIED' ? (record.ran ? 'block' : 'deny') : record.ran ? 'allow' : 'none'
    // One attribute at a time: `setAttributes` would take a fresh object and walk its entries.
    span.setAttribute(attr.ATTR_TOOL_OUTCOME, outcome)
    span.setAttribute(attr.ATTR_POLICY_DECISION, decision)
    if (code !== undefined) {
      span.setAttribute(attr.ATTR_ERROR_TYPE, code)
      span.setStatus({ code: SpanStatusCode.ERROR, message: code })
    }
    if (this.options.captureContent) span.setAttribute(attr.ATTR_GEN_AI_TOOL_CALL_RESULT, resultText(result.content, this.options.maxContentLength))
    span.end()
    // The call's own context, passed rather than looked up (the active one is the caller's, not the call's).
    this.instruments.toolDuration.record(
      (performance.now() - record.started) / 1000,
      this.counts.count(unknown ? UNKNOWN_TOOL_NAME : exec.name, outcome),
      record.context,
    )
  }

  readonly onChild = (event: ChildRunEvent): void => {
    if (event.type === 'start') this.children.set(event.runId, event)
    else this.children.delete(event.runId)
  }

  readonly onRun = (event: AgentRunEvent): void => {
    const key = event.agent ?? null
    if (event.type === 'start') {
      const child = event.agent === undefined ? undefined : this.children.get(event.agent)
      const parent = (child && this.callOf(child)?.context) ?? context.active()
      const name = child ? child.tool : this.options.agentName
      const attributes: Attributes = {
        [attr.ATTR_GEN_AI_OPERATION_NAME]: attr.GEN_AI_OPERATION_INVOKE_AGENT,
        [attr.ATTR_GEN_AI_AGENT_NAME]: name,
      }
      if (event.agent !== undefined) attributes[attr.ATTR_GEN_AI_AGENT_ID] = event.agent
      if (event.session !== undefined) attributes[attr.ATTR_GEN_AI_CONVERSATION_ID] = event.session
      const span = this.tracer.startSpan(`${attr.GEN_AI_OPERATION_INVOKE_AGENT} ${name}`, { kind: SpanKind.INTERNAL, attributes }, parent)
      const record: RunRecord = { span, context: trace.setSpan(parent, span) }
      if (event.session !== undefined) record.conversation = event.session
      const stack = this.runs.get(key)
      if (stack) stack.push(record)
      else this.runs.set(key, [record])
      return
    }
    const stack = this.runs.get(key)
    const record = stack?.pop()
    if (stack && !stack.length) this.runs.delete(key)
    if (!record) return
    const stopReason = event.stopReason ?? 'completed'
    record.span.setAttribute(attr.ATTR_RUN_STOP_REASON, stopReason)
    if (stopReason === 'failed') {
      record.span.setAttribute(attr.ATTR_ERROR_TYPE, 'RUN_FAILED')
      record.span.setStatus({ code: SpanStatusCode.ERROR, message: 'RUN_FAILED' })
    }
    record.span.end()
  }

  readonly onRequest = (event: AgentRequestEvent): void => {
    if (event.type === 'start') return this.startRequest(event)
    const record = this.requests.get(event.request)
    if (!record) return
    this.requests.delete(event.request)
    const { span, attributes } = record
    const seconds = (performance.now() - record.started) / 1000
    if (event.error !== undefined) {
      const code = codeOf(event.error)
      span.setAttribute(attr.ATTR_ERROR_TYPE, code)
      span.setStatus({ code: SpanStatusCode.ERROR, message: code })
      this.instruments.operationDuration.record(seconds, { ...attributes, [attr.ATTR_ERROR_TYPE]: code })
    } else {
      this.instruments.operationDuration.record(seconds, attributes)
    }
    if (event.finishReason !== undefined) span.setAttribute(attr.ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [event.finishReason])
    const usage = event.usage
    if (usage) {
      span.setAttribute(attr.ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.inputTokens)
      span.setAttribute(attr.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.outputTokens)
      if (usage.cacheReadTokens !== undefined) span.setAttribute(attr.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cacheReadTokens)
      if (usage.cacheWriteTokens !== undefined) span.setAttribute(attr.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, usage.cacheWriteTokens)
      this.instruments.tokenUsage.record(usage.inputTokens, { ...attributes, [attr.ATTR_GEN_AI_TOKEN_TYPE]: 'input' })
      this.instruments.tokenUsage.record(usage.outputTokens, { ...attributes, [attr.ATTR_GEN_AI_TOKEN_TYPE]: 'output' })
    }
    if (this.options.captureContent && event.error === undefined) {
      const text = outputMessagesText(event.text ?? '', event.toolCalls ?? [], event.finishReason, this.options.maxContentLength)
      span.setAttribute(attr.ATTR_GEN_AI_OUTPUT_MESSAGES, text)
    }
    span.end()
  }

  readonly onCompact = (event: AgentCompactEvent): void => {
    const record = this.runOf(event.agent)
    record?.span.addEvent('cordage.compaction', {
      'cordage.compaction.reason': event.reason,
      'cordage.compaction.tokens_before': event.tokensBefore,
      'cordage.compaction.tokens_after': event.tokensAfter,
      'cordage.compaction.summarized': event.summarized,
      'cordage.compaction.cleared': event.cleared,
    })
  }

  /** Ends whatever is still open (the plugin is unloading): nothing in flight is lost or left dangling. */
  close(): void {
    for (const record of this.tools.values()) endUnfinished(record.span)
    for (const record of this.requests.values()) endUnfinished(record.span)
    for (const stack of this.runs.values()) for (const record of stack.toReversed()) endUnfinished(record.span)
    this.tools.clear()
    this.requests.clear()
    this.runs.clear()
    this.children.clear()
  }

  /** Spans open now (tests check that none leaks). */
  get openSpans(): number {
    let runs = 0
    for (const stack of this.runs.values()) runs += stack.length
    return this.tools.size + this.requests.size + runs
  }

  private startTool(exec: ToolExec, unknown = false): ToolRecord {
    const existing = this.tools.get(exec.token)
    if (existing) return existing
    const parent = this.parentOf(exec)
    const tool = unknown ? bounded(exec.name, MAX_TOOL_NAME) : exec.name
    const attributes: Attributes = {
      [attr.ATTR_GEN_AI_OPERATION_NAME]: attr.GEN_AI_OPERATION_EXECUTE_TOOL,
      [attr.ATTR_GEN_AI_TOOL_NAME]: tool,
      [attr.ATTR_GEN_AI_TOOL_CALL_ID]: exec.callId.length > MAX_CALL_ID ? bounded(exec.callId, MAX_CALL_ID) : exec.callId,
      [attr.ATTR_GEN_AI_TOOL_TYPE]: 'function',
    }
    if (exec.parent !== undefined) attributes[attr.ATTR_TOOL_NESTED] = true
    if (this.options.captureContent) attributes[attr.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = argumentsText(exec.arguments, this.options.maxContentLength)
    // Only registered names are kept as span names (up to 1000 of them).
    const name = unknown ? `${attr.GEN_AI_OPERATION_EXECUTE_TOOL} ${tool}` : this.toolSpanName(exec.name)
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent)
    const record: ToolRecord = { span, context: trace.setSpan(parent, span), exec, started: performance.now(), ran: false }
    this.tools.set(exec.token, record)
    return record
  }

  /** The context a call's span starts in: its enclosing call's, else its run's, else the active one. */
  private parentOf(exec: ToolExec): TraceContext {
    if (exec.parent !== undefined) {
      const enclosing = this.tools.get(exec.parent)
      if (enclosing) return enclosing.context
    }
    if (exec.agent !== undefined) {
      const run = this.runOf(exec.agent)
      if (run) return run.context
    }
    const active = context.active()
    // A call from no agent: a remote caller's context (an MCP request) wins over a local unnamed run.
    if (exec.agent === undefined && trace.getSpan(active) === undefined) return this.runOf(undefined)?.context ?? active
    return active
  }

  private toolSpanName(tool: string): string {
    let name = this.spanNames.get(tool)
    if (name === undefined) {
      name = `${attr.GEN_AI_OPERATION_EXECUTE_TOOL} ${tool}`
      if (this.spanNames.size < 1000) this.spanNames.set(tool, name)
    }
    return name
  }

  private runOf(agent: string | undefined): RunRecord | undefined {
    return this.runs.get(agent ?? null)?.at(-1)
  }

  /** The call that started a child run: the latest in flight with its call id and tool. */
  private callOf(child: ChildRunEvent): ToolRecord | undefined {
    let found: ToolRecord | undefined
    for (const record of this.tools.values()) if (record.exec.callId === child.parentCallId && record.exec.name === child.tool) found = record
    return found
  }

  private startRequest(event: AgentRequestEvent): void {
    const run = this.runOf(event.agent)
    const parent = run?.context ?? context.active()
    const separator = event.model.indexOf(':')
    const provider = separator > 0 ? event.model.slice(0, separator) : event.model
    const model = event.modelName ?? (separator > 0 ? event.model.slice(separator + 1) : event.model)
    const attributes: Attributes = {
      [attr.ATTR_GEN_AI_OPERATION_NAME]: attr.GEN_AI_OPERATION_CHAT,
      [attr.ATTR_GEN_AI_PROVIDER_NAME]: provider,
      [attr.ATTR_GEN_AI_REQUEST_MODEL]: model,
    }
    const spanAttributes: Attributes = { ...attributes }
    if (run?.conversation !== undefined) spanAttributes[attr.ATTR_GEN_AI_CONVERSATION_ID] = run.conversation
    if (this.options.captureContent) spanAttributes[attr.ATTR_GEN_AI_INPUT_MESSAGES] = inputMessagesText(event.request.messages, this.options.maxContentLength)
    const span = this.tracer.startSpan(`${attr.GEN_AI_OPERATION_CHAT} ${model}`, { kind: SpanKind.CLIENT, attributes: spanAttributes }, parent)
    this.requests.set(event.request, { span, started: performance.now(), attributes })
  }
}

/** How a call ended, for `cordage.tool.outcome` and the tool metrics' attribute. */
export function outcomeOf(result: ToolExecutionResult): string {
  if (!result.isError) return 'success'
  switch (result.error.info?.code) {
    case 'DENIED':
      return 'denied'
    case 'ABORTED':
    case 'ABORTED_BEFORE_DISPATCH':
      return 'aborted'
    case 'TOOL_TIMEOUT':
      return 'timeout'
    default:
      return 'error'
  }
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code
  return typeof code === 'string' && code ? code : ((error as Error | undefined)?.name ?? 'Error')
}

function endUnfinished(span: Span): void {
  span.setAttribute(attr.ATTR_ERROR_TYPE, 'UNLOADED')
  span.setStatus({ code: SpanStatusCode.ERROR, message: 'the telemetry plugin was unloaded before this ended' })
  span.end()
}
