import { Context, Service, symbols } from 'cordis'
import Schema from 'schemastery'
import {
  CordageError, ToolAbortedBeforeDispatchError, ToolAbortedError, ToolArgsError, ToolDefinitionError, ToolDeniedError,
  ToolOutputError, ToolTimeoutError, UnknownToolError, compileValidator, toJsonValue, type HookContext, type JsonValue,
  type ToolDefinition, type ToolExecutionResult, type ToolRunContext,
} from '@cordage/core'
import { checkDefinition } from './definition.js'
import { FailureFrom, errorMessage, failure, freezeResult, normalize, toContent, toContexts } from './normalize.js'
import type { ExecuteInput, PostDecision, PreDecision, ToolGuard, ToolSchema } from './types.js'
import { waterfall, type Hook } from './waterfall.js'

interface RawEvents {
  _hooks: Record<string, Hook[] | undefined>
}

const NEVER = new AbortController().signal
let callCounter = 0

export declare namespace ToolRegistry {
  interface Config {
    timeoutGraceMs: number
  }
}

/** The `tools` service: registration, listing and the execution pipeline (see the package README). */
export class ToolRegistry extends Service {
  static readonly Config: Schema<Partial<ToolRegistry.Config>, ToolRegistry.Config> = Schema.object({
    timeoutGraceMs: Schema.natural().default(2000).description('How long a timed-out or cancelled body may take to settle before its result is given up on.'),
  })

  private readonly definitions = new Map<string, ToolDefinition>()
  private readonly guards = new Set<ToolGuard>()
  private readonly events: RawEvents
  private readonly config: ToolRegistry.Config

  constructor(ctx: Context, config: Partial<ToolRegistry.Config> = {}) {
    super(ctx, 'tools')
    // Methods are looked up on the service directly: no per-call shadow contexts on the hot path.
    ;(this as any)[symbols.tracker].noShadow = true
    this.config = { timeoutGraceMs: config.timeoutGraceMs ?? 2000 }
    const events = ctx.events as any
    this.events = events[symbols.original] ?? events
    // Bound once so `const { execute } = ctx.tools` works and no Context property is read per call.
    this.execute = this.execute.bind(this)
  }

  /** Registers a tool as an effect of the caller's fiber: unloading the caller unregisters it. */
  register(definition: ToolDefinition): () => void {
    checkDefinition(definition)
    const name = definition.name
    if (this.definitions.has(name)) throw new ToolDefinitionError(`a tool named "${name}" is already registered`)
    // Compile now so a schema ajv rejects fails registration, not the first call.
    compileValidator(definition.output.schema)
    const registry = this.raw()
    return this.ctx.effect(() => {
      if (registry.definitions.has(name)) throw new ToolDefinitionError(`a tool named "${name}" is already registered`)
      registry.definitions.set(name, definition)
      registry.changed()
      return () => {
        if (registry.definitions.get(name) !== definition) return
        registry.definitions.delete(name)
        registry.changed()
      }
    }, `tools.register(${JSON.stringify(name)})`)
  }

  /** The registered definition named `name`. */
  get(name: string): ToolDefinition | undefined {
    return this.raw().definitions.get(name)
  }

  /** Every tool's model-facing schema, sorted by name. */
  list(): ToolSchema[] {
    return [...this.raw().definitions.values()]
      .filter((d) => !d.hidden)
      .map((d) => ({ name: d.name, description: d.description, parameters: d.parameters, outputSchema: d.output.schema }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /** Adds a monotonic deny rule (runs after pre-execute; nothing later re-allows). An effect of the caller. */
  guard(fn: ToolGuard): () => void {
    const registry = this.raw()
    return this.ctx.effect(() => {
      registry.guards.add(fn)
      return () => registry.guards.delete(fn)
    }, 'tools.guard()')
  }

  /** Runs one call through the pipeline; never rejects for tool or policy failures. */
  async execute(input: ExecuteInput): Promise<ToolExecutionResult> {
    // A caller passing no input object gets a failed result like any other bad call, not a TypeError.
    if (typeof input !== 'object' || input === null) input = { name: String(input), arguments: undefined }
    const token = Symbol(typeof input?.name === 'string' ? input.name : 'tool')
    const callerSignal = input.signal
    let args: JsonValue = null
    let argsError: unknown
    try {
      args = toJsonValue(input.arguments, { freeze: true })
    } catch (error) {
      argsError = new ToolArgsError(`the arguments are not JSON: ${errorMessage(error)}`, [], { cause: error })
    }
    const definition = this.definitions.get(input.name)
    const timeoutMs = definition?.timeoutMs
    const controller = timeoutMs !== undefined ? new AbortController() : undefined
    const deferred: HookContext[] = []
    const exec: { -readonly [K in keyof ToolRunContext]: ToolRunContext[K] } = {
      token,
      callId: input.callId ?? `call_${(++callCounter).toString(36)}`,
      name: input.name,
      arguments: args,
      signal: controller?.signal ?? callerSignal ?? NEVER,
      deferContext: (context) => void deferred.push(Object.freeze({ source: String(context.source), text: String(context.text) })),
    }
    if (input.parent !== undefined) exec.parent = input.parent
    if (input.agent !== undefined) exec.agent = input.agent
    Object.freeze(exec)
    let bodyRan = false
    let result: ToolExecutionResult
    if (argsError) result = failure(argsError)
    else if (!definition) result = failure(new UnknownToolError(String(input.name), [...this.definitions.keys()].sort()))
    else if (callerSignal?.aborted) result = failure(new ToolAbortedBeforeDispatchError())
    else {
      // The fast path skips every async step that has nothing to do.
      const hooks = this.events._hooks
      const denial = hooks['tools/pre-execute']?.length || this.guards.size ? await this.admit(exec) : undefined
      if (denial) result = failure(denial)
      else if (callerSignal?.aborted) result = failure(new ToolAbortedBeforeDispatchError())
      else if (this.definitions.get(input.name) !== definition) {
        // Its plugin unloaded while policy or approval was deciding: never run a body whose owner is gone.
        result = failure(new UnknownToolError(input.name, [...this.definitions.keys()].sort(), 'was unregistered before the call could run'))
      } else {
        bodyRan = true
        result = await this.around(definition, exec, controller, callerSignal, deferred)
        if (hooks['tools/post-execute']?.length) result = await this.post(definition, exec, result)
      }
    }
    // Cancellation replaces only a success: denials and failures are more specific.
    if (!result.isError && callerSignal?.aborted) {
      result = failure(bodyRan ? new ToolAbortedError() : new ToolAbortedBeforeDispatchError(), undefined, result.additionalContexts)
    }
    this.notify(exec, result)
    return result
  }

  private raw(): this {
    return ((this as any)[symbols.original] ?? this) as this
  }

  private changed(): void {
    this.notifyAll('tools/changed', [])
  }

  /** Pre-execute waterfall, approval and guards; returns the denial, if any. Errors deny (fail closed). */
  private async admit(exec: ToolRunContext): Promise<CordageError | undefined> {
    if (this.events._hooks['tools/pre-execute']?.length) {
      let decision: PreDecision
      try {
        decision = await waterfall(this.events._hooks['tools/pre-execute']!, exec, undefined, async (): Promise<PreDecision> => ({ kind: 'allow' }))
      } catch (error) {
        return new ToolDeniedError(`a pre-execute policy failed, so the call was denied: ${errorMessage(error)}`)
      }
      if (decision?.kind === 'deny') return new ToolDeniedError(decision.reason || 'denied by policy')
      if (decision?.kind === 'ask') {
        const approval = this.ctx.get('approval')
        if (!approval) return new ToolDeniedError(`approval required${decision.reason ? ` (${decision.reason})` : ''}, but no approval service is available`)
        try {
          if ((await approval.request(exec, decision.reason)) !== 'allow') return new ToolDeniedError(`the user did not approve this call${decision.reason ? ` (${decision.reason})` : ''}`)
        } catch (error) {
          return new ToolDeniedError(`the approval request failed, so the call was denied: ${errorMessage(error)}`)
        }
      } else if (decision?.kind !== 'allow') {
        return new ToolDeniedError(`a pre-execute listener returned an invalid decision ${JSON.stringify(decision)}`)
      }
    }
    for (const guard of this.guards) {
      let reason: string | undefined
      try {
        reason = guard(exec)
      } catch (error) {
        reason = `a guard failed, so the call was denied: ${errorMessage(error)}`
      }
      if (reason !== undefined) return new ToolDeniedError(reason)
    }
  }

  /** The `tools/execute` waterfall around the body; with no listeners, the body's own promise (no extra hops). */
  private around(definition: ToolDefinition, exec: ToolRunContext, controller: AbortController | undefined, callerSignal: AbortSignal | undefined, deferred: HookContext[]): Promise<ToolExecutionResult> {
    const hooks = this.events._hooks['tools/execute']
    if (!hooks?.length) return this.body(definition, exec, controller, callerSignal, deferred)
    return this.wrapped(hooks, definition, exec, controller, callerSignal, deferred)
  }

  /** Runs the `tools/execute` waterfall, then renormalises a success this call's body did not produce. */
  private async wrapped(hooks: Hook[], definition: ToolDefinition, exec: ToolRunContext, controller: AbortController | undefined, callerSignal: AbortSignal | undefined, deferred: HookContext[]): Promise<ToolExecutionResult> {
    // The results this dispatch normalised: what its body returned (a listener may call `next()` only once).
    let produced: ToolExecutionResult | undefined
    const inner = async () => (produced = await this.body(definition, exec, controller, callerSignal, deferred))
    let result: ToolExecutionResult
    try {
      result = await waterfall(hooks, exec, undefined, inner)
    } catch (error) {
      return failure(error, undefined, deferred.length ? [...deferred] : undefined)
    }
    if (!result || typeof result !== 'object' || typeof result.isError !== 'boolean') {
      return failure(new ToolOutputError(`a tools/execute listener returned ${JSON.stringify(result) ?? 'undefined'} instead of a result`))
    }
    let contexts: HookContext[] | undefined
    try {
      contexts = result.additionalContexts === undefined ? undefined : toContexts(result.additionalContexts, 'a tools/execute listener')
    } catch (error) {
      return failure(error)
    }
    if (!result.isError) return result === produced ? result : normalize(definition, exec, result.value, contexts)
    if (Object.isFrozen(result)) return result
    try {
      const content = toContent(result.content, 'a tools/execute listener')
      return failure(new FailureFrom(result.error), content, contexts)
    } catch (error) {
      return failure(error, undefined, contexts)
    }
  }

  /** Runs the body with the timeout and cancellation rules, then normalises its value. */
  private async body(definition: ToolDefinition, exec: ToolRunContext, controller: AbortController | undefined, callerSignal: AbortSignal | undefined, deferred: HookContext[]): Promise<ToolExecutionResult> {
    const contexts = () => (deferred.length ? [...deferred] : undefined)
    if (exec.signal === NEVER) {
      // Nothing can abort this call: no timeout bookkeeping, no race.
      let value: unknown
      try {
        value = await definition.execute(exec.arguments, exec)
      } catch (error) {
        return failure(error, undefined, contexts())
      }
      return normalize(definition, exec, value, contexts())
    }
    let settled: Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }>
    try {
      settled = Promise.resolve(definition.execute(exec.arguments, exec)).then((value) => ({ ok: true as const, value }), (error) => ({ ok: false as const, error }))
    } catch (error) {
      settled = Promise.resolve({ ok: false as const, error })
    }
    const signal = exec.signal
    const timeoutMs = definition.timeoutMs
    let timedOut = false
    let timer: NodeJS.Timeout | undefined
    let unlink: (() => void) | undefined
    if (controller) {
      timer = setTimeout(() => {
        timedOut = true
        controller.abort(new ToolTimeoutError(timeoutMs!))
      }, timeoutMs)
      if (callerSignal) {
        const forward = () => controller.abort(callerSignal.reason)
        callerSignal.addEventListener('abort', forward, { once: true })
        unlink = () => callerSignal.removeEventListener('abort', forward)
      }
    }
    // Once the body's signal aborts, wait at most the grace period for it to settle.
    let graceTimer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    let outcome: Awaited<typeof settled> | 'abandoned'
    if (signal === NEVER) {
      outcome = await settled
    } else {
      outcome = await new Promise<Awaited<typeof settled> | 'abandoned'>((resolve) => {
        settled.then(resolve)
        onAbort = () => { graceTimer = setTimeout(() => resolve('abandoned'), this.config.timeoutGraceMs) }
        if (signal.aborted) onAbort()
        else signal.addEventListener('abort', onAbort, { once: true })
      })
      signal.removeEventListener('abort', onAbort!)
    }
    clearTimeout(timer)
    clearTimeout(graceTimer)
    unlink?.()
    if (outcome === 'abandoned') {
      const reason = timedOut ? `timed out after ${timeoutMs} ms` : 'was cancelled'
      this.ctx.logger('tools').warn(`tool "${definition.name}" (${exec.callId}) ${reason} and did not settle within ${this.config.timeoutGraceMs} ms of its abort signal; its result is abandoned`)
      return failure(timedOut ? new ToolTimeoutError(timeoutMs!) : new ToolAbortedError(), undefined, contexts())
    }
    if (timedOut) return failure(new ToolTimeoutError(timeoutMs!), undefined, contexts())
    if (!outcome.ok) {
      // A body that stops because the caller cancelled was cancelled, not broken.
      const cancelled = callerSignal?.aborted && (outcome.error === callerSignal.reason || (outcome.error as Error)?.name === 'AbortError')
      return failure(cancelled ? new ToolAbortedError() : outcome.error, undefined, contexts())
    }
    return normalize(definition, exec, outcome.value, contexts())
  }

  /** The `tools/post-execute` waterfall and its decision rules. */
  private async post(definition: ToolDefinition, exec: ToolRunContext, result: ToolExecutionResult): Promise<ToolExecutionResult> {
    if (!this.events._hooks['tools/post-execute']?.length) return result
    let decision: PostDecision
    try {
      decision = await waterfall(this.events._hooks['tools/post-execute']!, exec, result, async (): Promise<PostDecision> => ({ kind: 'accept' }))
    } catch (error) {
      return failure(new ToolDeniedError(`a post-execute policy failed, so the result was withheld: ${errorMessage(error)}`), undefined, result.additionalContexts)
    }
    let contexts = result.additionalContexts
    try {
      if (decision?.additionalContexts !== undefined) contexts = [...(contexts ?? []), ...toContexts(decision.additionalContexts, 'a post-execute listener')]
    } catch (error) {
      return failure(error, undefined, contexts)
    }
    if (decision?.kind === 'block') {
      const feedback = decision.feedback
      let content
      try {
        content = toContent(typeof feedback === 'string' ? [{ type: 'text', text: feedback }] : feedback, 'a post-execute block')
      } catch (error) {
        return failure(error, undefined, contexts)
      }
      const message = typeof feedback === 'string' ? feedback : content.map((b) => (b.type === 'text' ? b.text : '')).join('\n') || 'blocked by policy'
      return failure(new ToolDeniedError(message), content, contexts)
    }
    if (decision?.kind !== 'accept') return failure(new ToolOutputError(`a post-execute listener returned an invalid decision ${JSON.stringify(decision)}`), undefined, contexts)
    const hasContent = decision.content !== undefined
    const hasValue = 'value' in decision && decision.value !== undefined
    if (hasContent && hasValue) return failure(new ToolOutputError('a post-execute listener replaced both content and value; replace one'), undefined, contexts)
    if (hasValue) {
      if (result.isError) return failure(new ToolOutputError('a post-execute listener replaced the value of a failed call'), undefined, contexts)
      return normalize(definition, exec, decision.value, contexts)
    }
    if (hasContent) {
      try {
        const content = toContent(decision.content, 'a post-execute listener')
        return freezeResult({ ...result, content, ...(contexts && { additionalContexts: contexts }) })
      } catch (error) {
        return failure(error, undefined, contexts)
      }
    }
    if (contexts === result.additionalContexts) return result
    return freezeResult({ ...result, additionalContexts: contexts })
  }

  /** Emits `tools/result` to every listener; a listener's error is logged and ignored. */
  private notify(exec: ToolRunContext, result: ToolExecutionResult): void {
    this.notifyAll('tools/result', [exec, result])
  }

  private notifyAll(name: string, args: unknown[]): void {
    const hooks = this.events._hooks[name]
    if (!hooks?.length) return
    for (const hook of hooks.slice()) {
      try {
        const returned = hook.callback(...args)
        if (returned && typeof returned.then === 'function') returned.then(undefined, (error: unknown) => this.logListenerError(name, error))
      } catch (error) {
        this.logListenerError(name, error)
      }
    }
  }

  private logListenerError(name: string, error: unknown): void {
    this.ctx.logger('tools').warn(`a ${name} listener failed (ignored): ${errorMessage(error)}`)
  }
}
