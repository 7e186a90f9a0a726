import { Context, Service } from 'cordis'
import { skipShadowContexts } from '@cordage/registry'
import Schema from 'schemastery'
import type { AgentLineage, ChildRunCaller, ChildRunOptions, ChildRunResult, JobsService, SubagentService } from '@cordage/services'
import { strictConfig } from '@cordage/core'
import { SubagentConfigError } from './errors.js'
import { ChildRuns, type AgentProfile, type RunSettings } from './runs.js'
import { STRUCTURED_OUTPUT, structuredOutputTool } from './structured.js'
import { subagentTool } from './subagent-tool.js'

export declare namespace Subagents {
  /** Limits, defaults and named profiles of child runs (what the run table works with). */
  type Config = RunSettings
}

// `'*'` rather than an absent list: schemastery turns an absent array into `[]`, which would mean "no tools".
const ToolSubset: Schema<string[] | '*'> = Schema.union([Schema.array(Schema.string()), Schema.const('*' as const)]).default('*')

const Profile: Schema<AgentProfile> = Schema.object({
  description: Schema.string().required().description('One line the parent model reads to choose this profile.'),
  system: Schema.string().description('System prompt of the child.'),
  tools: ToolSubset.description('Tool names the child may use, or "*" for everything its caller may use.'),
  maxTurns: Schema.natural().min(1).description('Model requests per child run.'),
})

const DEFAULT_SYSTEM =
  'You are a subagent: another agent delegated the task below to you. Work on it with your tools, then answer with a concise, complete report of what you found or did; the agent that started you sees only your final message.'

/**
 * The `subagents` service and the `subagent` tool: child agents on the same context, each with its own
 * session linked to the call that started it, a tool subset held by a registry guard (so programs and
 * nested subagents cannot widen it), and the context's policy, spill and hooks on every call.
 */
export class Subagents extends Service implements SubagentService {
  static readonly inject = ['tools']
  static readonly Config: Schema<Partial<Subagents.Config>, Subagents.Config> = strictConfig(
    'subagent',
    Schema.object({
      maxDepth: Schema.natural().default(3).description('Deepest nesting of subagents (1: children only; 0 forbids delegation).'),
      maxConcurrent: Schema.natural().min(1).default(4).description('Children one agent may run at once (fan-out).'),
      maxTurns: Schema.natural().min(1).default(20).description('Model requests per child run, unless its profile says otherwise.'),
      system: Schema.string().default(DEFAULT_SYSTEM).description('System prompt of children without a profile.'),
      tools: ToolSubset.description('Default tool subset of children: names, or "*" for everything their caller may use.'),
      agents: Schema.dict(Profile).default({}).description('Named agent profiles.'),
      budget: Schema.object({
        children: Schema.natural()
          .min(1)
          .default(100)
          .description('Child runs one root run may start in total, across nested subagents, workflows and programs.'),
      }).description('What one root run may spend across all its children.'),
      persist: Schema.boolean().default(true).description('Write a session file per child run.'),
      sessionDir: Schema.string().description('Sessions directory, relative to cwd (default .cordage/sessions).'),
      cwd: Schema.string().description('Working directory recorded in child sessions (default: process.cwd()).'),
    }),
  )

  /**
   * Runs one child agent to its end; see `SubagentService`. An own function that closes over the run
   * table: callers hold the Context-bound proxy, through which every `this.<field>` read costs a trap.
   */
  readonly run: (options: ChildRunOptions, caller: ChildRunCaller) => Promise<ChildRunResult>
  /** Who started `agent` (see `SubagentService`); an own function for the same reason as `run`. */
  readonly lineage: (agent: string | undefined) => AgentLineage

  constructor(ctx: Context, config: Subagents.Config) {
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
    ctx.tools.guard((exec) => {
      const record = exec.agent === undefined ? undefined : runs.records.get(exec.agent)
      if (record && !record.allowed.has(exec.name)) return `tool "${exec.name}" is not available to subagent ${record.runId}`
      return undefined
    })
    ctx.tools.register(structuredOutputTool((agent) => (agent === undefined ? undefined : runs.records.get(agent)?.structured)))
    ctx.tools.register(subagentTool(runs, config.agents, () => ctx.get('jobs') as JobsService | undefined))
  }
}

export default Subagents
