import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import {
  CordageError,
  ToolAbortedBeforeDispatchError,
  ToolAbortedError,
  ToolDefinitionError,
  UnknownToolError,
  compileValidator,
  errorMessage,
  failure,
  type ToolDefinition,
  type ToolExec,
  type ToolExecutionResult,
} from '@cordage/core'
import { approvalDenial, checkArguments, guardDenial, preFailure, readPreDecision } from './admission.js'
import { AbortWatch } from './abort-watch.js'
import { runBody, type BodyHost } from './body.js'
import { nameOf, openCall, probeExec, type Call, type Entry } from './call.js'
import { fastServiceAccessor, hookTable, skipShadowContexts, unproxied, type HookTable } from './cordis-seam.js'
import { checkDefinition } from './definition.js'
import { applyPostDecision, applyPresentation, postFailure } from './post-decision.js'
import type { ExecuteInput, PostDecision, PreDecision, ToolGuard, ToolSchema } from './types.js'
import { waterfall } from './waterfall.js'
import { fromWrapper } from './wrapper.js'

export declare namespace ToolRegistry {
  interface Config {
    timeoutGraceMs: number
  }
}

const accept = async (): Promise<PostDecision> => ({ kind: 'accept' })
const allow = async (): Promise<PreDecision> => ({ kind: 'allow' })

/** Cancellation replaces only a success (`ABORTED` if the body ran): denials and failures are more specific. */
function cancelled(call: Call, result: ToolExecutionResult, bodyRan: boolean): ToolExecutionResult {
  if (result.isError || !call.callerSignal?.aborted) return result
  return failure(bodyRan ? new ToolAbortedError() : new ToolAbortedBeforeDispatchError(), undefined, result.additionalContexts)
}

/** The `tools` service: registration, listing and the execution pipeline (phases in the package README). */
export class ToolRegistry extends Service {
  static readonly Config: Schema<Partial<ToolRegistry.Config>, ToolRegistry.Config> = Schema.object({
    timeoutGraceMs: Schema.natural().default(2000).description('How long a timed-out or cancelled body may take to settle before its result is given up on.'),
  })

  private readonly entries = new Map<string, Entry>()
  private readonly guards = new Set<ToolGuard>()
  /** What `list()` returns until the tools change; `generation` counts the changes. */
  private listed: ToolSchema[] | undefined
  private listing = false
  private generation = 0
  private readonly hooks: HookTable
  private readonly config: ToolRegistry.Config
  private readonly host: BodyHost

  constructor(ctx: Context, config: Partial<ToolRegistry.Config> = {}) {
    super(ctx, 'tools')
    skipShadowContexts(this)
    this.config = { timeoutGraceMs: config.timeoutGraceMs ?? 2000 }
    this.hooks = hookTable(ctx)
    const aborts = new AbortWatch((error) => this.warn(`an abort callback failed: ${errorMessage(error)}`))
    this.host = { graceMs: this.config.timeoutGraceMs, warn: this.warn, aborts }
    // Unloading the registry takes its abort listeners off every signal they were on.
    ctx.effect(() => () => aborts.close(), 'tools abort listeners')
    // Bound once so `const { execute } = ctx.tools` works and no Context property is read per call.
    this.execute = this.execute.bind(this)
    ctx.effect(() => fastServiceAccessor('tools', ['execute', 'get', 'list', 'wouldDeny']), 'tools accessor')
  }

  /** Registers a tool as an effect of the caller's fiber: unloading the caller unregisters it. */
  register(definition: ToolDefinition): () => void {
    checkDefinition(definition)
    const name = definition.name
    if (this.entries.has(name)) throw new ToolDefinitionError(`a tool named "${name}" is already registered`)
    // Compile now so a schema ajv rejects fails registration, not the first call.
    compileValidator(definition.output.schema)
    const entry: Entry = { definition, validateArgs: compileValidator(definition.parameters) }
    if (definition.annotations) entry.annotations = Object.freeze({ ...definition.annotations })
    const registry = unproxied(this)
    return this.ctx.effect(
      () => {
        if (registry.entries.has(name)) throw new ToolDefinitionError(`a tool named "${name}" is already registered`)
        registry.entries.set(name, entry)
        registry.changed()
        return () => {
          if (registry.entries.get(name) !== entry) return
          registry.entries.delete(name)
          registry.changed()
        }
      },
      `tools.register(${JSON.stringify(name)})`,
    )
  }

  /** The registered definition named `name`. */
  get(name: string): ToolDefinition | undefined {
    return unproxied(this).entries.get(name)?.definition
  }

  /**
   * Every tool's model-facing schema (each frozen), sorted by name, in a fresh array. Built once and kept
   * until the next registration or unregistration (`tools/changed`): a description is read when the list
   * is built, so a definition whose description changes announces it by re-registering.
   */
  list(): ToolSchema[] {
    const registry = unproxied(this)
    if (registry.listed) return registry.listed.slice()
    // A description getter may list the tools itself (Code Mode's SDK): that inner build is not kept.
    const outermost = !registry.listing
    const generation = registry.generation
    registry.listing = true
    try {
      const schemas = [...registry.entries.values()]
        .filter(({ definition: d }) => !d.hidden)
        .map(({ definition: d, annotations }) => {
          const schema: ToolSchema = { name: d.name, description: d.description, parameters: d.parameters, outputSchema: d.output.schema }
          if (annotations) schema.annotations = annotations
          return Object.freeze(schema)
        })
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      if (outermost && generation === registry.generation) registry.listed = schemas
      return schemas.slice()
    } finally {
      if (outermost) registry.listing = false
    }
  }

  /** Adds a monotonic deny rule (runs after pre-execute; nothing later re-allows). An effect of the caller. */
  guard(fn: ToolGuard): () => void {
    const registry = unproxied(this)
    return this.ctx.effect(() => {
      registry.guards.add(fn)
      return () => registry.guards.delete(fn)
    }, 'tools.guard()')
  }

  /**
   * The reason the guards would deny a call of `name` with `arguments` from the same caller (`parent`,
   * `agent`), or `undefined`. Only the guards run (policy's `deny` rules are guards): no pre-execute
   * listener, approval or body. For a tool whose results name other resources (definitions in other
   * files), to withhold what the caller could not have asked for directly. Arguments that are not JSON
   * deny; a guard that throws denies.
   */
  wouldDeny(input: Omit<ExecuteInput, 'callId' | 'signal'>): string | undefined {
    const registry = unproxied(this)
    if (!registry.guards.size) return undefined
    const exec = probeExec(input)
    return typeof exec === 'string' ? exec : guardDenial(registry.guards, exec)?.message
  }

  /**
   * Runs one call through the pipeline; never rejects: whatever goes wrong is a frozen failure result.
   * The phases are the README's: input and arguments, admission, execution + policy + presentation,
   * cancellation, observers. Phases with no listeners cost nothing (no await).
   */
  async execute(input: ExecuteInput): Promise<ToolExecutionResult> {
    // One try around the whole call (no extra promise per call): hostile input or a broken listener
    // contract ends as a coded failure, never a rejection.
    try {
      // A caller passing no input object gets a failed result like any other bad call, not a TypeError.
      if (typeof input !== 'object' || input === null) input = { name: nameOf(input), arguments: undefined }
      const entry = typeof input.name === 'string' ? this.entries.get(input.name) : undefined
      const call = openCall(input, entry)
      // Input and arguments, then admission (awaited only when pre-execute listeners may answer).
      let refusal = this.checkInput(call, entry)
      if (!refusal) refusal = this.hooks['tools/pre-execute']?.length ? await this.admit(call, entry!) : this.checkGuards(call, entry!)
      // Execution, policy and presentation; then cancellation, then the observers.
      let result = refusal ? failure(refusal) : await this.run(entry!.definition, call)
      result = cancelled(call, result, !refusal)
      if (this.hooks['tools/result']?.length) this.notifyAll('tools/result', [call.exec, result])
      return result
    } catch (error) {
      this.warn(`a tool call failed inside the pipeline: ${errorMessage(error)}`)
      return failure(CordageError.is(error) ? error : new CordageError('TOOL_FAILED', `the call failed inside the tool pipeline: ${errorMessage(error)}`))
    }
  }

  /** Input and arguments: a malformed input, an unknown tool, a pre-aborted caller or invalid arguments fail here. */
  private checkInput(call: Call, entry: Entry | undefined): CordageError | undefined {
    if (call.inputError) return call.inputError
    if (!entry) return this.unknown(call.exec.name)
    if (call.callerSignal?.aborted) return new ToolAbortedBeforeDispatchError()
    return checkArguments(entry, call.exec.arguments)
  }

  /** Admission without pre-execute listeners (no await): the guards only. */
  private checkGuards(call: Call, entry: Entry): CordageError | undefined {
    return (this.guards.size ? guardDenial(this.guards, call.exec) : undefined) ?? this.checkStillRunnable(call, entry)
  }

  /** After admission: the caller may have aborted, or the tool's plugin unloaded, while policy or approval decided. */
  private checkStillRunnable(call: Call, entry: Entry): CordageError | undefined {
    if (call.callerSignal?.aborted) return new ToolAbortedBeforeDispatchError()
    // Never run a body whose owner is gone.
    if (this.entries.get(call.exec.name) !== entry) return this.unknown(call.exec.name, 'was unregistered before the call could run')
    return undefined
  }

  /** Execution (`tools/execute` around the body), policy (`tools/post-execute`), then presentation (`tools/present`). */
  private async run(definition: ToolDefinition, call: Call): Promise<ToolExecutionResult> {
    const hooks = this.hooks
    const { exec } = call
    let result = await (hooks['tools/execute']?.length ? this.wrapped(definition, call) : runBody(definition, call, this.host))
    let accepted = true
    if (hooks['tools/post-execute']?.length) [result, accepted] = await this.post(definition, exec, result)
    if (accepted && exec.parent === undefined && !call.callerSignal?.aborted && hooks['tools/present']?.length) result = await this.present(exec, result)
    return result
  }

  private unknown(name: string, reason?: string): UnknownToolError {
    return new UnknownToolError(name, [...this.entries.keys()].sort(), reason)
  }

  private readonly warn = (message: string) => this.ctx.logger('tools').warn(message)

  private changed(): void {
    this.listed = undefined
    this.generation++
    this.notifyAll('tools/changed', [])
  }

  /** Admission with pre-execute listeners: their waterfall, the approver when it asks, then the guards. Errors deny (fail closed). */
  private async admit(call: Call, entry: Entry): Promise<CordageError | undefined> {
    let verdict
    try {
      verdict = readPreDecision(await waterfall(this.hooks['tools/pre-execute']!, call.exec, undefined, allow))
    } catch (error) {
      return preFailure(error)
    }
    if (verdict instanceof CordageError) return verdict
    const denial = verdict ? await this.approve(call.exec, verdict.ask) : undefined
    return denial ?? this.checkGuards(call, entry)
  }

  /** The approver's answer to an `ask`, as a denial (none when it allows). */
  private async approve(exec: ToolExec, reason: string | undefined): Promise<CordageError | undefined> {
    const approval = this.ctx.get('approval')
    let answer: Parameters<typeof approvalDenial>[1]
    try {
      answer = approval ? await approval.request(exec, reason) : undefined
    } catch (error) {
      answer = { error }
    }
    return approvalDenial(reason, answer)
  }

  /** The `tools/execute` waterfall around the body, then its outcome made a proper result of this call. */
  private async wrapped(definition: ToolDefinition, call: Call): Promise<ToolExecutionResult> {
    // What this dispatch's body produced (a listener may call `next()` only once).
    let produced: ToolExecutionResult | undefined
    const inner = async () => (produced = await runBody(definition, call, this.host))
    let result: unknown
    try {
      result = await waterfall(this.hooks['tools/execute']!, call.exec, undefined, inner)
    } catch (error) {
      return failure(error, undefined, call.deferred.length ? [...call.deferred] : undefined)
    }
    return fromWrapper(definition, call, result, produced)
  }

  /** The `tools/post-execute` waterfall and its decision rules; also whether the decision was an `accept`. */
  private async post(definition: ToolDefinition, exec: ToolExec, result: ToolExecutionResult): Promise<[ToolExecutionResult, boolean]> {
    let decision: PostDecision
    try {
      decision = await waterfall(this.hooks['tools/post-execute']!, exec, result, accept)
    } catch (error) {
      return [postFailure(error, result), false]
    }
    const settled = applyPostDecision(definition, exec, result, decision)
    return [settled, decision?.kind === 'accept']
  }

  /** The final presentation phase: listeners bound the content of a settled, accepted direct result. Fails open. */
  private async present(exec: ToolExec, result: ToolExecutionResult): Promise<ToolExecutionResult> {
    let content: unknown
    try {
      content = await waterfall(this.hooks['tools/present']!, exec, result, async () => result.content)
    } catch (error) {
      this.warn(`a tools/present listener failed; the content is shown as it was: ${errorMessage(error)}`)
      return result
    }
    const presented = applyPresentation(result, content)
    if (presented.problem) this.warn(`a tools/present listener returned unusable content; the content is shown as it was: ${presented.problem}`)
    return presented.result
  }

  private notifyAll(name: string, args: unknown[]): void {
    const listeners = this.hooks[name]
    if (!listeners?.length) return
    for (const hook of listeners.slice()) {
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
