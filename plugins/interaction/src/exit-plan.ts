import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import { InteractionUnavailableError, InvalidPlanError, PlanModeInactiveError, PlanRejectedError } from './errors.js'
import type { PlanMode } from './plan-mode.js'

const Parameters = Schema.object({
  plan: Schema.string().max(100_000).required().description('The complete plan as markdown, starting with a # heading that names it.'),
})

const Output = Schema.object({
  approved: Schema.const(true as const).required(),
})

const HEADING = /^#{1,6}[ \t]+\S/

/** `exit_plan_mode`: shows the plan to the user; approval leaves plan mode, anything else comes back as feedback. */
export function exitPlanTool(ctx: Context, planMode: PlanMode): ToolDefinition {
  return defineTool({
    name: 'exit_plan_mode',
    description:
      "Use only in plan mode. Present your plan for the user's review and, on approval, leave plan mode. Send the COMPLETE plan. The user may approve (carry out the plan from your next step) or keep planning: their feedback comes back in the tool result; revise and present again.",
    parameters: Parameters,
    output: {
      schema: Output,
      render: () => [{ type: 'text', text: 'Plan approved: plan mode exited; carry out the plan starting with your next step.' }],
    },
    execute: async (args, exec) => {
      if (!planMode.active) throw new PlanModeInactiveError()
      const plan = args.plan.trim()
      if (!HEADING.test(plan)) throw new InvalidPlanError()
      const interaction = ctx.get('interaction')
      if (!interaction)
        throw new InteractionUnavailableError(
          'exit_plan_mode cannot show the plan for approval',
          'Plan mode stays on: stop and give the complete plan as your final answer.',
        )
      const review = await interaction.approvePlan(plan, exec.signal)
      if (review?.approved !== true) {
        const feedback = typeof review?.feedback === 'string' && review.feedback.trim() ? review.feedback.trim() : undefined
        throw new PlanRejectedError(feedback)
      }
      // A call aborted during the review leaves plan mode on: the registry reports it ABORTED.
      if (!exec.signal.aborted) planMode.set(false)
      return { approved: true as const }
    },
  })
}
