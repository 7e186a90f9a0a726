import { setMaxListeners } from 'node:events'
import type { Context } from 'cordis'
import { AbortWatch, type AbortWait, type ToolRegistry } from '@cordage/registry'
import { hookTable, serviceOf, type HookTable } from '@cordage/registry/cordis-seam'
import { Agent, SessionLog, type AgentOptions, type AgentResult, type ModelService, type ToolView } from '@cordage/agent'
import { ToolAbortedError, ToolArgsError, type JsonValue } from '@cordage/core'
import type { AgentLineage, AgentUsageEvent, ChildRunCaller, ChildRunEvent, ChildRunOptions, ChildRunResult, SubagentService } from '@cordage/services'
import { RootBudgets, type RunBudget } from './budget.js'
import { SubagentError } from './errors.js'
import { STRUCTURED_OUTPUT, prepareOutputSchema, structuredOutputSchema, type StructuredState } from './structured.js'

/** A named child profile from config. */
export interface AgentProfile {
  description: string
  system?: string
  /** Names, or `'*'`: everything the caller may use. */
  tools: string[] | '*'
  maxTurns?: number
}

/** The limits and defaults the run table works with (the plugin's config). */
export interface RunSettings {
  maxDepth: number
  maxConcurrent: number
  maxTurns: number
  system: string
  tools: string[] | '*'
  agents: Record<string, AgentProfile>
  /** Per root run, across nesting: how many child runs it may start in total. */
  budget: { children: number; turns?: number; tokens?: number }
  persist: boolean
  sessionDir?: string
  cwd?: string
}

/** One child run in progress. */
export interface RunRecord {
  runId: string
  depth: number
  /** `[runId, parent, …, root]`: who started this run, for ownership of what it starts (jobs). */
  lineage: AgentLineage
  /** Tools the run may call, directly or from its programs (`structured_output` included when it has a schema). */
  allowed: ReadonlySet<string>
  /** Children of this run currently running (fan-out). */
  active: number
  /** Its root run's budget, which its own children draw on too. */
  budget: RunBudget
  /** Stops the run (and its siblings under the same caller signal) when its root run's budget is spent. */
  stop?: (reason: Error) => void
  structured?: StructuredState
}

const REMINDER = `You have not reported your result. Call the \`${STRUCTURED_OUTPUT}\` tool now with arguments matching its parameter schema exactly; a plain text answer does not count.`

/** The signal children of one caller signal run under, while any of them runs. */
interface ChildSignal {
  controller: AbortController
  /** Children running under it; it waits on the caller's signal only while this is > 0. */
  users: number
  forward: () => void
  wait: AbortWait | undefined
}

/**
 * Children's signals: one per caller signal, shared by the children running under it (every subagent
 * call of one parent run passes that run's signal), aborted when the caller's signal aborts or by
 * `close` (plugin unload). Sharing matters for speed: creating an AbortSignal on Node 20 costs more
 * than the rest of a short child's bookkeeping, and each fresh one makes every later use of it slower.
 * A signal stays cached for its caller (weakly) and waits on the caller only while a child runs. The
 * waiting goes through one `AbortWatch`: at most one listener of this plugin on a caller's signal,
 * whatever the fan-out and however many runs come and go, until that signal aborts or is collected,
 * or the plugin unloads (`close`).
 */
class ChildSignals {
  private readonly byCaller = new WeakMap<AbortSignal, ChildSignal>()
  /** Signals with running children, which `close` aborts. */
  private readonly inUse = new Set<ChildSignal>()
  private readonly callers = new AbortWatch()

  acquire(caller: AbortSignal): ChildSignal {
    let child = this.byCaller.get(caller)
    if (!child || child.controller.signal.aborted) {
      const controller = new AbortController()
      // Shared by every child of the caller, each adding listeners while it waits (its model stream,
      // its tool calls): no "possible leak" warning at 11, their number is the fan-out's.
      setMaxListeners(Infinity, controller.signal)
      child = { controller, users: 0, forward: () => controller.abort(caller.reason), wait: undefined }
      this.byCaller.set(caller, child)
    }
    if (child.users++ === 0) {
      child.wait = this.callers.add(caller, child.forward)
      this.inUse.add(child)
    }
    return child
  }

  release(child: ChildSignal): void {
    if (--child.users > 0) return
    child.wait?.cancel()
    this.inUse.delete(child)
  }

  /** Aborts every running child's signal and takes this plugin's listeners off the callers' signals. */
  close(reason: unknown): void {
    for (const child of this.inUse) child.controller.abort(reason)
    this.callers.close()
  }
}

/** What a child's `agent/child` events say of it. */
function progress(type: ChildRunEvent['type'], runId: string, depth: number, options: ChildRunOptions, caller: ChildRunCaller): ChildRunEvent {
  return { type, runId, tool: caller.tool, parentCallId: caller.callId, depth, label: options.label ?? labelOf(options.prompt) }
}

/** The first line of a prompt, shortened, for progress lines and job titles. */
export function labelOf(prompt: string): string {
  const line = prompt.trim().split('\n', 1)[0] ?? ''
  return line.length > 80 ? `${line.slice(0, 79)}…` : line
}

/**
 * The table of child runs and the way one runs: limits checked before anything is created, the tool
 * subset narrowed from the caller's, a session linked to the calling tool call, and the run's end turned
 * into a result or a coded error. The registry guard (see `index.ts`) reads `records` to hold the subset
 * for nested calls too.
 */
export class ChildRuns implements SubagentService {
  readonly records = new Map<string, RunRecord>()
  /** Children running under top-level callers (those that are not themselves child runs). */
  private readonly topLevel = new Map<string, number>()
  /** Runs not settled yet, and what `close` waits on until the last one settled. */
  private active = 0
  private drained: (() => void) | undefined
  private allSettled: Promise<void> | undefined
  /** The signals of running children, which `close` aborts; after it, no run starts. */
  private readonly signals = new ChildSignals()
  private closed: SubagentError | undefined
  private sequence = 0
  /** Root runs' budgets; the plugin feeds it `agent/run` events. */
  readonly budgets: RootBudgets

  // Context property reads are costly (cordis builds an Error per read for its inject check), so the
  // functions a run needs are read once here; each stays bound to the plugin's context.
  private readonly emit: Context['emit']
  private readonly tools: ToolRegistry
  private readonly hooks: HookTable

  constructor(
    private readonly ctx: Context,
    private readonly settings: RunSettings,
  ) {
    this.emit = ctx.emit
    this.hooks = hookTable(ctx)
    this.budgets = new RootBudgets(settings.budget, (agent) => this.records.has(agent))
    this.tools = ctx.tools
  }

  /** Charges one model request's usage (`agent/usage`) to its root run's budget; a child run over it is stopped. */
  chargeUsage(event: AgentUsageEvent): void {
    const record = event.agent === undefined ? undefined : this.records.get(event.agent)
    const budget = record?.budget ?? this.budgets.ofRun(event.agent)
    if (!budget) return
    if (event.purpose === 'turn') budget.spend('turns', 1)
    const exceeded = budget.spend('tokens', event.usage ? event.usage.inputTokens + event.usage.outputTokens : 0)
    if (exceeded) record?.stop?.(exceeded)
  }

  /** The lineage of `agent`: its own and its ancestors' ids while it runs as a child, else `[agent ?? null]`. */
  lineage(agent: string | undefined): AgentLineage {
    return (agent === undefined ? undefined : this.records.get(agent)?.lineage) ?? [agent ?? null]
  }

  /** Aborts every run and waits for them to settle (plugin unload). */
  async close(): Promise<void> {
    this.closed ??= new SubagentError('ABORTED', 'the subagent plugin was unloaded')
    this.signals.close(this.closed)
    if (this.active) await (this.allSettled ??= new Promise<void>((resolve) => (this.drained = resolve)))
  }

  /** Runs one child to its end; `shape` turns the result into what the caller returns (the tool's value), in this same async step. */
  async run<T = ChildRunResult>(options: ChildRunOptions, caller: ChildRunCaller, shape?: (result: ChildRunResult) => T): Promise<T> {
    const { settings } = this
    if (this.closed) throw this.closed
    const parent = caller.agent === undefined ? undefined : this.records.get(caller.agent)
    const depth = (parent?.depth ?? 0) + 1
    if (depth > settings.maxDepth) {
      throw new SubagentError(
        'SUBAGENT_DEPTH',
        settings.maxDepth === 0 ? 'delegation is disabled (maxDepth 0)' : `subagent depth ${depth} exceeds maxDepth ${settings.maxDepth}`,
      )
    }
    const running = parent ? parent.active : (this.topLevel.get(caller.agent ?? '') ?? 0)
    if (running >= settings.maxConcurrent) {
      throw new SubagentError(
        'SUBAGENT_FANOUT',
        `${parent ? `subagent ${parent.runId}` : 'this agent'} already runs ${running} subagents (maxConcurrent ${settings.maxConcurrent}); wait for one to finish`,
      )
    }
    const profile = this.profile(options.agent)
    const allowed = this.subset(options, profile, parent)
    const structured = options.outputSchema === undefined ? undefined : prepareOutputSchema(options.outputSchema)
    // The instance, as the child's agent would resolve it itself (no tracing proxy per run).
    const model = serviceOf<ModelService>(this.ctx, 'model')
    if (!model) throw new SubagentError('NO_MODEL', 'a subagent needs the model service: load a model provider plugin')
    if (caller.signal.aborted) throw new ToolAbortedError('subagent run was cancelled before it started')
    // Charged last among the checks, so a call refused for another reason costs the run nothing.
    const budget = parent ? parent.budget : this.budgets.forTopLevel(caller)
    budget.charge('children')

    const session = settings.persist
      ? SessionLog.create({
          cwd: settings.cwd,
          dir: settings.sessionDir,
          model: model.id,
          depth,
          parent: {
            ...(parent ? { session: parent.runId } : caller.agent !== undefined && { session: caller.agent }),
            callId: caller.callId,
            tool: caller.tool,
          },
        })
      : undefined
    const runId = session?.id ?? `sub-${++this.sequence}`
    // Plain assignments rather than conditional spreads here and below: this runs once per child round trip.
    const record: RunRecord = { runId, depth, lineage: [runId, ...(parent ? parent.lineage : [caller.agent ?? null])], allowed, active: 0, budget }
    if (structured) {
      record.allowed = new Set([...allowed, STRUCTURED_OUTPUT])
      record.structured = structured
    }
    // From here the run counts as live for `close` until its `finally` ends.
    this.active++
    this.records.set(runId, record)
    this.adjust(parent, caller.agent, +1)
    const begun = performance.now()
    const childSignal = this.signals.acquire(caller.signal)
    const { signal } = childSignal.controller
    record.stop = (reason) => childSignal.controller.abort(reason)
    let stopReason = 'failed'
    try {
      if (this.watched()) this.emit('agent/child', progress('start', runId, depth, options, caller))
      const view: ToolView = { allow: [...allowed] }
      if (structured) view.extra = [structuredOutputSchema(this.tools.get(STRUCTURED_OUTPUT), structured.schema)]
      const agentOptions: AgentOptions = {
        model,
        system: profile?.system ?? settings.system,
        maxTurns: profile?.maxTurns ?? settings.maxTurns,
        agent: runId,
        tools: view,
      }
      if (session) agentOptions.session = session
      const agent = new Agent(this.ctx, agentOptions)
      const until = structured ? () => structured.value !== undefined : undefined
      let result = await agent.run(options.prompt, { signal, until })
      if (structured && structured.value === undefined && result.stopReason === 'completed' && !signal.aborted) {
        result = await agent.run(REMINDER, { signal, until })
      }
      stopReason = result.stopReason
      // A run stopped because its root's budget ran out says so, rather than "cancelled".
      if (result.stopReason === 'aborted' && SubagentError.is(signal.reason) && signal.reason.code === 'RUN_BUDGET_EXCEEDED') throw signal.reason
      const outcome = this.outcome(runId, result, structured?.value)
      return shape ? shape(outcome) : (outcome as T)
    } catch (error) {
      stopReason = signal.aborted ? 'aborted' : 'failed'
      throw error
    } finally {
      this.records.delete(runId)
      this.adjust(parent, caller.agent, -1)
      if (session) await session.close({ reason: stopReason }).catch(() => {})
      this.signals.release(childSignal)
      try {
        if (this.watched()) {
          const end = progress('end', runId, depth, options, caller)
          end.stopReason = stopReason
          end.isError = stopReason !== 'completed'
          end.durationMs = Math.round(performance.now() - begun)
          this.emit('agent/child', end)
        }
      } finally {
        if (--this.active === 0) this.drained?.()
      }
    }
  }

  /** Whether anyone listens to `agent/child` (an emit through cordis costs more than the rest of a short run's bookkeeping, and so does the label). */
  private watched(): boolean {
    return (this.hooks['agent/child']?.length ?? 0) > 0
  }

  private outcome(runId: string, result: AgentResult, value: JsonValue | undefined): ChildRunResult {
    const partial = result.text ? `\nPartial output before the run ended:\n${result.text}` : ''
    switch (result.stopReason) {
      case 'aborted':
        throw new ToolAbortedError(`subagent run was cancelled${partial}`)
      case 'max-turns':
        throw new SubagentError('SUBAGENT_FAILED', `subagent run hit its turn limit (${result.turns} turns) before finishing${partial}`)
      case 'length':
        throw new SubagentError('SUBAGENT_FAILED', `subagent run hit its token limit before finishing${partial}`)
      case 'completed':
        break
    }
    if (this.records.get(runId)?.structured && value === undefined) {
      throw new SubagentError('STRUCTURED_OUTPUT_MISSING', `the subagent finished without calling ${STRUCTURED_OUTPUT}, even after a reminder${partial}`)
    }
    const outcome: ChildRunResult = { runId, text: result.text, turns: result.turns }
    if (value !== undefined) outcome.value = value
    return outcome
  }

  private profile(name: string | undefined): AgentProfile | undefined {
    if (name === undefined) return undefined
    const profile = this.settings.agents[name]
    if (!profile) {
      const names = Object.keys(this.settings.agents)
      throw new ToolArgsError(`unknown agent profile "${name}"; available: ${names.length ? names.join(', ') : '(none configured)'}`)
    }
    return profile
  }

  /** The child's tools: what was asked (or the profile's, or the configured default), never more than its caller may use. */
  private subset(options: ChildRunOptions, profile: AgentProfile | undefined, parent: RunRecord | undefined): ReadonlySet<string> {
    if (options.tools) {
      let outside: string[] | undefined
      for (const name of options.tools) if (!this.mayUse(name, parent)) (outside ??= []).push(name)
      if (outside) {
        throw new ToolArgsError(
          `tools not available to the caller cannot be given to a subagent: ${outside.join(', ')}; available: ${[...this.everything(parent)].sort().join(', ') || '(none)'}`,
        )
      }
      return new Set(options.tools)
    }
    const named = profile ? profile.tools : this.settings.tools
    return named === '*' ? this.everything(parent) : new Set(named.filter((name) => this.mayUse(name, parent)))
  }

  /** Whether the caller may use `name`: its own subset, or (at the top level) any listed tool. */
  private mayUse(name: string, parent: RunRecord | undefined): boolean {
    if (name === STRUCTURED_OUTPUT) return false
    if (parent) return parent.allowed.has(name)
    const tool = this.tools.get(name)
    return tool !== undefined && !tool.hidden
  }

  /** Everything the caller may use. */
  private everything(parent: RunRecord | undefined): Set<string> {
    return parent ? new Set([...parent.allowed].filter((name) => name !== STRUCTURED_OUTPUT)) : new Set(this.tools.list().map((tool) => tool.name))
  }

  private adjust(parent: RunRecord | undefined, caller: string | undefined, delta: number): void {
    if (parent) {
      parent.active += delta
      return
    }
    const key = caller ?? ''
    const next = (this.topLevel.get(key) ?? 0) + delta
    if (next > 0) this.topLevel.set(key, next)
    else this.topLevel.delete(key)
  }
}
