import type { JsonSchemaNode, JsonValue, ToolExecutionToken } from '@cordage/core'
import type { AgentLineageSource } from './agents.js'

/** Who asks for a child run: the calling tool's view of its call. */
export interface ChildRunCaller {
  /** The caller's `exec.agent`: its own run id when it is itself a child, its session id at the top level. */
  agent?: string
  /** The tool call that starts the child (`exec.callId`): the child's session header links it. */
  callId: string
  /** The tool that starts it: `subagent`, `workflow`, `ralph`. */
  tool: string
  /** Aborting it stops the child (its model stream and its tool calls). */
  signal: AbortSignal
  /**
   * The outermost tool call the request descends from (`exec.parent ?? exec.token` of the calling
   * tool): a caller outside any agent run (an MCP client, a host) gets one run budget per such call.
   */
  root?: ToolExecutionToken
}

/** One child run. */
export interface ChildRunOptions {
  prompt: string
  /** A named agent profile from the subagent plugin's config (system prompt, tools, max turns). */
  agent?: string
  /** Tool names the child may use; never more than the caller itself may use. */
  tools?: readonly string[]
  /** An object-rooted JSON Schema: the child must end by calling `structured_output` with a matching object. */
  outputSchema?: JsonSchemaNode
  /** A short label for progress lines (default: the prompt's first line). */
  label?: string
}

/** How a child run ended successfully. */
export interface ChildRunResult {
  /** The child's run id (its session id when sessions are persisted). */
  runId: string
  /** The text of the child's last assistant message. */
  text: string
  /** The validated `structured_output` object, when an `outputSchema` was given. */
  value?: JsonValue
  turns: number
}

/**
 * The `subagents` service (`ctx.subagents`): runs child agents on the same context, each with its own
 * session, a tool subset and the parent's policy, spill and hooks, and knows their lineage (who started
 * whom) while they run. `run` rejects with a `CordageError` (`SUBAGENT_DEPTH`, `SUBAGENT_FANOUT`,
 * `RUN_BUDGET_EXCEEDED`, `SUBAGENT_FAILED`, `STRUCTURED_OUTPUT_MISSING`, `INVALID_ARGS`, `ABORTED`) when
 * the child cannot start or does not finish.
 */
export interface SubagentService extends AgentLineageSource {
  run(options: ChildRunOptions, caller: ChildRunCaller): Promise<ChildRunResult>
}
