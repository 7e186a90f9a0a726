import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { SystemSection } from '@cordage/services'
import { askTool } from './ask.js'
import { exitPlanTool } from './exit-plan.js'
import { globToRegExp, PLAN_MODE_TEXT, PlanMode } from './plan-mode.js'

/** Plugin name. */
export const name = 'interaction'
/** Needs the tool registry; `ctx.interaction` is read per call. */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  planMode: boolean
  writeTools: string[]
  readOnlyTools: string[]
}

const ToolGlob = Schema.string().pattern(/^[a-zA-Z0-9_*-]+$/)

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG naming the key. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    planMode: Schema.boolean().default(false).description("Start in plan mode (the CLI's --plan sets it too)."),
    writeTools: Schema.array(ToolGlob)
      .default(['bash', 'terminal_*', 'cordis_mount'])
      .description('Tools plan mode always denies (`*` matches any characters), besides tools that declare a write path argument.'),
    readOnlyTools: Schema.array(ToolGlob)
      .default([])
      .description('Tools plan mode lets run although their annotations do not say readOnlyHint: true (e.g. a bridged MCP tool you know only reads).'),
  }),
)

export { PLAN_MODE_TEXT, writesBecause } from './plan-mode.js'
export {
  InteractionUnavailableError,
  InvalidAnswersError,
  InvalidPlanError,
  InvalidQuestionsError,
  PlanModeInactiveError,
  PlanRejectedError,
} from './errors.js'

/** Registers `ask_user_question` and `exit_plan_mode` and provides `ctx.planMode`. */
export function apply(ctx: Context, config: Config): void {
  const tools: ToolRegistry = ctx.tools
  const planMode = new PlanMode(ctx, tools, config.writeTools.map(globToRegExp), config.readOnlyTools.map(globToRegExp))
  ctx.provide('planMode', planMode)
  tools.register(askTool(ctx))
  tools.register(exitPlanTool(ctx, planMode))
  ctx.on('agent/system', (sections: SystemSection[]) => {
    if (planMode.active) sections.push({ source: 'plan-mode', text: PLAN_MODE_TEXT })
  })
  if (config.planMode) planMode.set(true)
}

/** The plugin as one object. */
export default { name, inject, Config, apply }
