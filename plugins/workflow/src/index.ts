import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { CodeRunner, SubagentService } from '@cordage/services'
import { strictConfig } from '@cordage/core'
import { Lifetime } from './lifetime.js'
import { Nesting } from './nesting.js'
import { ralphTool } from './ralph.js'
import { workflowTool } from './workflow.js'

export const name = 'workflow'
export const inject = ['tools']

/** Limits of workflow programs and ralph loops. */
export interface Config {
  maxAgents: number
  maxConcurrentAgents: number
  maxRounds: number
  maxDepth: number
}

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    maxAgents: Schema.natural().min(1).default(100).description('Subagents one workflow run may start.'),
    maxConcurrentAgents: Schema.natural()
      .min(1)
      .default(4)
      .description("Subagents of one workflow running at once (the rest wait their turn); keep it within the subagent plugin's maxConcurrent."),
    maxRounds: Schema.natural().min(1).default(64).description("Ceiling on a ralph call's maxRounds."),
    maxDepth: Schema.natural().min(1).default(2).description('Deepest nesting of workflow calls (1: a workflow program cannot start another workflow).'),
  }),
)

/** Registers `workflow` and `ralph`; the services they use (`subagents`, `codeMode`) are looked up per call. Unloading stops their runs. */
export function apply(ctx: Context, config: Config): void {
  const subagents = () => ctx.get('subagents') as SubagentService | undefined
  const lifetime = new Lifetime()
  const nesting = new Nesting(config.maxDepth)
  ctx.effect(() => () => lifetime.close(), 'workflow runs')
  ctx.tools.register(
    workflowTool({
      subagents,
      codeMode: () => ctx.get('codeMode') as CodeRunner | undefined,
      maxAgents: config.maxAgents,
      maxConcurrentAgents: config.maxConcurrentAgents,
      nesting,
      lifetime,
    }),
  )
  ctx.tools.register(ralphTool({ subagents, tools: ctx.tools, maxRounds: config.maxRounds, nesting, lifetime }))
}

export default { name, inject, Config, apply }
