/** One option of a question: `label` is what the user picks and what comes back in `selected`. */
export interface QuestionOption {
  label: string
  description?: string
}

/** A question put to the user; `id` is echoed back in its answer. */
export interface Question {
  id: string
  question: string
  /** A short title (a few words) a UI may show above the question. */
  header?: string
  options: QuestionOption[]
  /** Several options may be selected (default: exactly one). */
  multiSelect?: boolean
}

/** The user's answer: labels of the chosen options, and free text when they typed their own answer. */
export interface Answer {
  id: string
  selected: string[]
  custom?: string
}

/** The user's verdict on a plan: approved, or kept in planning with optional feedback. */
export type PlanReview = { approved: true } | { approved: false; feedback?: string }

/**
 * The `interaction` service (`ctx.interaction`): the human side of an agent, implemented by whatever
 * faces the user (the CLI's prompts, an MCP client's elicitation). Both methods settle only once the user
 * answered or `signal` aborted; they reject with a `CordageError` coded `INTERACTION_UNAVAILABLE` when no
 * user can be asked, and `ABORTED` when `signal` aborted or the user dismissed the prompt.
 */
export interface InteractionService {
  /** Asks every question in order; resolves to one answer per question, in the same order. */
  ask(questions: readonly Question[], signal: AbortSignal): Promise<Answer[]>
  /** Shows the plan (markdown) and asks the user to approve it. */
  approvePlan(plan: string, signal: AbortSignal): Promise<PlanReview>
}

/** The `planMode` service (`ctx.planMode`): while active, tools that write are denied. */
export interface PlanModeService {
  readonly active: boolean
  /** Enters (`true`) or leaves (`false`) plan mode; emits `plan/mode` when the state changes. */
  set(active: boolean): void
}
