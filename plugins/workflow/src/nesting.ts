import type { ToolExec, ToolExecutionToken } from '@cordage/core'
import type { ChildRunCaller } from '@cordage/services'
import { WorkflowError } from './errors.js'

/**
 * Workflow calls by dispatch token (a program's calls carry it as `parent`): how deep each is, and the
 * outermost call it belongs to, whose run budget every child below it draws on.
 */
export class Nesting {
  private readonly calls = new WeakMap<ToolExecutionToken, { depth: number; root: ToolExecutionToken }>()

  constructor(private readonly maxDepth: number) {}

  /** The outermost call above `exec` (itself when it has no parent), for `ChildRunCaller.root`. */
  rootOf(exec: ToolExec): ToolExecutionToken {
    return exec.parent === undefined ? exec.token : (this.calls.get(exec.parent)?.root ?? exec.parent)
  }

  /** The caller a child run of the workflow call `exec` reports, drawing on its outermost call's budget. */
  callerOf(exec: ToolExec, tool: string, signal: AbortSignal): ChildRunCaller {
    return { ...(exec.agent !== undefined && { agent: exec.agent }), callId: exec.callId, tool, signal, root: this.rootOf(exec) }
  }

  /** Records the workflow call `exec`; throws `WORKFLOW_DEPTH` past `maxDepth`, since each level holds a sandbox of its own. */
  enter(exec: ToolExec): void {
    const depth = (exec.parent === undefined ? 0 : (this.calls.get(exec.parent)?.depth ?? 0)) + 1
    if (depth > this.maxDepth)
      throw new WorkflowError(
        'WORKFLOW_DEPTH',
        `workflow depth ${depth} exceeds maxDepth ${this.maxDepth}; do the work in this program instead of starting another workflow`,
      )
    this.calls.set(exec.token, { depth, root: this.rootOf(exec) })
  }
}
