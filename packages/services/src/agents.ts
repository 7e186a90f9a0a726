import type { CompletionRequest, ToolCall, Usage } from './model.js'

/**
 * An agent as ownership sees it: its id (`exec.agent`; `null` for a top-level agent without one), then
 * the agents that started it, nearest first, ending with its root: `[self, parent, …, root]`. A
 * top-level agent's lineage has one entry.
 */
export type AgentLineage = readonly (string | null)[]

/** Who started whom: implemented by the `subagents` service, read by plugins that keep per-agent state. */
export interface AgentLineageSource {
  /** The lineage of `agent` while it runs; `[agent ?? null]` for an agent this source did not start. */
  lineage(agent: string | undefined): AgentLineage
}

/** The lineage of `agent` as `source` knows it (a top-level agent when there is no source). */
export function lineageOf(source: AgentLineageSource | undefined, agent: string | undefined): AgentLineage {
  return source?.lineage(agent) ?? [agent ?? null]
}

/**
 * Whether the agent `caller` may use something started by the agent whose lineage is `owner`: the
 * starter and its ancestors may (a parent sees what its children started, recursively), siblings and
 * descendants may not. Something no agent started (`owner` undefined) is shared by top-level agents and
 * closed to child runs, so a child never reaches beyond its own lineage.
 */
export function mayUse(owner: AgentLineage | undefined, caller: AgentLineage): boolean {
  if (owner === undefined) return caller.length === 1
  return owner.includes(caller[0] ?? null)
}

/**
 * An agent loop's run started or ended (one `Agent.run`, children's included): `agent` is what its tool
 * calls carry as `exec.agent`. Limits that hold per root run (the subagent plugin's run budget) key on it.
 */
export interface AgentRunEvent {
  type: 'start' | 'end'
  agent?: string
  /** The id of the session the run appends to, when it has one. */
  session?: string
  /** On `end`: how the run stopped (`completed`, `aborted`, `max-turns`, `length`), or `failed` when it rejected. */
  stopReason?: string
}

/**
 * One model request of an agent run (a turn), at its start and at its end; emitted only while someone
 * listens (telemetry); observe-only. The start and end events of one request carry the same `request`.
 */
export interface AgentRequestEvent {
  type: 'start' | 'end'
  /** What the run's tool calls carry as `exec.agent`. */
  agent?: string
  /** The model service id, e.g. `openai:gpt-4o-mini`. */
  model: string
  /** The model name as the provider's API knows it (`ModelService.info.model`), when known. */
  modelName?: string
  /** The request as the model receives it (messages and tools). */
  request: CompletionRequest
  /** On `end`: why the model stopped (`stop`, `tool_calls`, `length`, …); absent when the request failed. */
  finishReason?: string
  /** On `end`, when the provider reported it. */
  usage?: Usage
  /** On `end`: the text the model answered with. */
  text?: string
  /** On `end`: the tool calls the model proposed. */
  toolCalls?: readonly ToolCall[]
  /** On `end`, when the request failed: what it rejected with. */
  error?: unknown
}

/** An agent run's conversation was compacted (emitted only while someone listens); observe-only. */
export interface AgentCompactEvent {
  agent?: string
  reason: 'auto' | 'overflow' | 'manual'
  tokensBefore: number
  tokensAfter: number
  /** Messages replaced by the summary. */
  summarized: number
  /** Tool results cleared. */
  cleared: number
}
