import { CordageError } from '@cordage/core'

/** No `interaction` service: nobody can be asked (headless, or an MCP client without elicitation). */
export class InteractionUnavailableError extends CordageError {
  constructor(what: string, remedy = 'Decide yourself, state your assumption, and carry on.') {
    super(
      'INTERACTION_UNAVAILABLE',
      `${what}: no user can be asked here (no interaction service; run \`cordage chat\` on a terminal, or use an MCP client that supports elicitation). ${remedy}`,
    )
  }
}

/** The questions break a rule the schema cannot express. */
export class InvalidQuestionsError extends CordageError {
  constructor(message: string) {
    super('INVALID_QUESTIONS', message)
  }
}

/** The interaction service answered something that does not fit the questions (a wiring fault). */
export class InvalidAnswersError extends CordageError {
  constructor(message: string) {
    super('INVALID_ANSWERS', `the interaction service returned unusable answers: ${message}`)
  }
}

/** `exit_plan_mode` outside plan mode. */
export class PlanModeInactiveError extends CordageError {
  constructor() {
    super('PLAN_MODE_INACTIVE', 'exit_plan_mode is only available in plan mode; you can already use every tool')
  }
}

/** The plan is not a markdown document with a heading. */
export class InvalidPlanError extends CordageError {
  constructor() {
    super('INVALID_PLAN', 'exit_plan_mode requires the complete plan as markdown starting with a # heading that names it')
  }
}

/** The user kept planning; the message carries their feedback. */
export class PlanRejectedError extends CordageError {
  constructor(readonly feedback: string | undefined) {
    super(
      'PLAN_REJECTED',
      feedback ? `The user chose to keep planning; their feedback: ${feedback}` : 'The user chose to keep planning; revise the plan and present it again.',
    )
  }
}
