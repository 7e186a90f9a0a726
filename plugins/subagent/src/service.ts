import { Context, Service } from 'cordis'
import { skipShadowContexts } from '@cordage/registry/cordis-seam'
import type { AgentLineage, ChildRunCaller, ChildRunOptions, ChildRunResult, JobsService, SubagentService } from '@cordage/services'
import { Config, inject } from './config.js'
import { SubagentConfigError } from './errors.js'
import { ChildRuns } from './runs.js'
import { STRUCTURED_OUTPUT, structuredOutputTool } from './structured.js'
import { subagentTool } from './subagent-tool.js'

/**
 * The `subagents` service and the `subagent` tool: child agents on the same context, each with its own
 * session linked to the call that started it, a tool subset held by a registry guard (so programs and
 * nested subagents cannot widen it), and the context's policy, spill and hooks on every call.
 */
export class Subagents extends Service implements SubagentService {
  static readonly inject = inject
  static readonly Config = Config

  /**
   * Runs one child agent to its end; see `SubagentService`. An own function that closes over the run
   * table: callers hold the Context-bound proxy, through which every `this.<field>` read costs a trap.
   */
  readonly run: (options: ChildRunOptions, caller: ChildRunCaller) => Promise<ChildRunResult>
  /** Who started `agent` (see `SubagentService`); an own function for the same reason as `run`. */
  readonly lineage: (agent: string | undefined) => AgentLineage

  constructor(ctx: Context, config: Config) {
    super(ctx, 'subagents')
    // `run` never depends on the caller's context: calls through `ctx.subagents` skip cordis's per-call shadow context.
    skipShadowContexts(this)
    for (const [name, profile] of Object.entries(config.agents)) {
      if (!/^[\w-]{1,64}$/.test(name)) throw new SubagentConfigError(`subagent: agent profile name "${name}" must be letters, digits, '_' or '-'`)
      if (profile.tools !== '*' && profile.tools.includes(STRUCTURED_OUTPUT))
        throw new SubagentConfigError(`subagent: agents.${name}.tools cannot list ${STRUCTURED_OUTPUT}; it is offered to runs with an outputSchema`)
    }
    const runs = new ChildRuns(ctx, config)
    this.run = (options, caller) => runs.run(options, caller)
    this.lineage = (agent) => runs.lineage(agent)
    ctx.effect(() => () => runs.close(), 'subagent runs')
    ctx.on('agent/run', (event) => runs.budgets.observe(event))
    ctx.on('agent/usage', (event) => runs.chargeUsage(event))
    ctx.tools.guard((exec) => {
      const record = exec.agent === undefined ? undefined : runs.records.get(exec.agent)
      if (record && !record.allowed.has(exec.name)) return `tool "${exec.name}" is not available to subagent ${record.runId}`
      return undefined
    })
    ctx.tools.register(structuredOutputTool((agent) => (agent === undefined ? undefined : runs.records.get(agent)?.structured)))
    ctx.tools.register(subagentTool(runs, config.agents, () => ctx.get('jobs') as JobsService | undefined))
  }
}
