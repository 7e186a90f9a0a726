import type { ToolExecutionToken } from '@cordage/core'
import type { RunObserver } from './hub.js'
import type { SessionLog } from './session-log.js'

/**
 * Logs every nested call (one with `parent`) made while one of this agent's direct calls runs, as
 * `tool/code-dispatch`. Direct calls are recognised by callId (`isOurs`) when they enter the
 * `tools/execute` waterfall, which is before their body can dispatch anything; nested calls of nested
 * calls are attributed to the same direct call. `index` counts that direct call's nested results in
 * the order they finished.
 */
export function codeDispatchObserver(session: SessionLog, isOurs: (callId: string, agent?: string) => boolean): RunObserver {
  const roots = new Map<ToolExecutionToken, string>()
  const counts = new Map<string, number>()
  return {
    onExecute(exec) {
      if (exec.parent === undefined) {
        if (!isOurs(exec.callId, exec.agent)) return
        roots.set(exec.token, exec.callId)
        counts.delete(exec.callId)
      } else {
        const root = roots.get(exec.parent)
        if (root !== undefined) roots.set(exec.token, root)
      }
    },
    onResult(exec, result) {
      if (exec.parent === undefined) {
        // The direct call is over; its nested calls have settled (a body settles after its work).
        if (roots.delete(exec.token)) counts.delete(exec.callId)
        return
      }
      const parentCallId = roots.get(exec.parent)
      if (parentCallId === undefined) return
      roots.delete(exec.token)
      const index = counts.get(parentCallId) ?? 0
      counts.set(parentCallId, index + 1)
      session.append('tool/code-dispatch', {
        parentCallId,
        index,
        name: exec.name,
        arguments: exec.arguments,
        content: result.content,
        isError: result.isError,
      })
    },
  }
}
