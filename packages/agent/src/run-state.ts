import type { AgentNotice } from '@cordage/services'
import type { ToolRegistry } from '@cordage/registry'
import type { RunOptions, StopReason } from './agent-types.js'
import type { ModelService, Usage } from './model.js'
import { addUsage, costOf, type UsageTotals } from './usage.js'

/** One run: what it resolved when it began and what it has produced so far. */
export interface RunState {
  model: ModelService
  tools: ToolRegistry
  signal: AbortSignal | undefined
  maxTurns: number
  until: RunOptions['until']
  /** Whether `agent/run` had listeners when the run began (its end is announced too). */
  announced: boolean
  /** Notices queued for the next model request. */
  notices: AgentNotice[]
  turns: number
  /** The last answer's text. */
  text: string
  tally: Tally
  /** How the run ended: until `finish` says otherwise, by rejecting. */
  stopped: StopReason | 'failed'
  /** Resolves `whenIdle()`. */
  release: () => void
  stopObserving: (() => void) | undefined
}

/** A run's usage and cost so far; `cost` becomes undefined once one request's usage or price is unknown. */
export interface Tally {
  usage: UsageTotals
  cost: number | undefined
}

/** Adds one request's usage to the run's tally; returns that request's cost (undefined when unknown). */
export function charge(tally: Tally, usage: Usage | undefined, model: ModelService): number | undefined {
  const cost = usage ? costOf(usage, model.info?.price) : undefined
  if (usage) addUsage(tally.usage, usage)
  // A partial sum would understate the cost: one unknown makes the total unknown.
  tally.cost = tally.cost === undefined || cost === undefined ? undefined : tally.cost + cost
  return cost
}
