import type { Context } from 'cordis'
import type { ToolExec, ToolExecutionResult } from '@cordage/core'
import type { AgentNotice } from '@cordage/services'

/** What one active run wants to observe. */
export interface RunObserver {
  onExecute?(exec: ToolExec): void
  onResult?(exec: ToolExec, result: ToolExecutionResult): void
  onNotice?(notice: AgentNotice): void
}

interface Hub {
  observers: Set<RunObserver>
  watchingTools: boolean
}

const hubs = new WeakMap<Context, Hub>()

/**
 * Routes `tools/execute`, `tools/result` and `agent/notice` to the active runs of agents made with
 * `ctx`. Listeners are installed once per context, as effects of its fiber (so unloading the owner
 * removes them), because installing them per run costs more than a whole turn of the loop. The tool
 * listeners are installed only once a run asks for them (a run with a session).
 */
export function observe(ctx: Context, observer: RunObserver, tools: boolean): () => void {
  let hub = hubs.get(ctx)
  if (!hub) {
    const created: Hub = { observers: new Set(), watchingTools: false }
    ctx.effect(() => {
      hubs.set(ctx, created)
      const stop = ctx.on('agent/notice', (notice) => {
        for (const each of created.observers) each.onNotice?.(notice)
      })
      return () => {
        stop()
        if (hubs.get(ctx) === created) hubs.delete(ctx)
      }
    }, 'agent run observers')
    hub = created
  }
  if (tools && !hub.watchingTools) {
    const target = hub
    target.watchingTools = true
    ctx.on('tools/execute', (exec, next) => {
      for (const each of target.observers) each.onExecute?.(exec)
      return next()
    })
    ctx.on('tools/result', (exec, result) => {
      for (const each of target.observers) each.onResult?.(exec, result)
    })
  }
  hub.observers.add(observer)
  return () => void hub.observers.delete(observer)
}
