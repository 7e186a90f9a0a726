import type { Usage } from './model.js'

/** Progress of a child run (a subagent, a workflow's agent, a ralph round), for displays such as the CLI's. */
export interface ChildRunEvent {
  type: 'start' | 'end'
  /** The child's run id (its session id when persisted). */
  runId: string
  /** The tool that started it: `subagent`, `workflow`, `ralph`. */
  tool: string
  /** The call of that tool. */
  parentCallId: string
  /** 1 for a child of a top-level run, 2 for a grandchild, … */
  depth: number
  /** A short description: the first line of the prompt. */
  label: string
  /** On `end`: how the run stopped (`completed`, `aborted`, `failed`, …). */
  stopReason?: string
  /** On `end`: whether the child failed. */
  isError?: boolean
  /** On `end`. */
  durationMs?: number
  /** On `end`, when the runner reports it: the child run's token totals (`AgentResult.usage`). */
  usage?: Usage
  /** On `end`, with `usage`: its cost in US dollars; absent when the price is unknown. */
  cost?: number
}
