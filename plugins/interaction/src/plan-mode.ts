import type { Context } from 'cordis'
import type { ToolExec } from '@cordage/core'
import type { PreDecision, ToolRegistry } from '@cordage/registry'
import type { PlanModeService } from '@cordage/services'

/** `*` matches any run of characters; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
}

/**
 * Why a tool counts as writing, or undefined when plan mode lets it run. In order: a name in `listed`
 * (config `writeTools`) writes; a declared `write` path writes; a name in `readOnly` (config
 * `readOnlyTools`) is read-only; annotations with `readOnlyHint: false` write (a bridged MCP tool
 * carries MCP's default `false` unless its server says `true`); a tool that declares neither is read-only.
 */
export function writesBecause(tools: ToolRegistry, name: string, listed: readonly RegExp[], readOnly: readonly RegExp[] = []): string | undefined {
  if (listed.some((pattern) => pattern.test(name))) return 'can change files or run commands'
  const definition = tools.get(name)
  if (definition?.paths?.some((path) => path.access === 'write')) return 'writes files'
  if (readOnly.some((pattern) => pattern.test(name))) return undefined
  if (definition?.annotations?.readOnlyHint === false) return 'may change things (it is not annotated readOnlyHint: true)'
  return undefined
}

/** The text that tells the model what plan mode allows. */
export const PLAN_MODE_TEXT =
  'Plan mode is active: explore and plan, but change nothing. Tools that write files or run commands are denied until the user approves a plan. Read the code you need, ask the user about real decisions with ask_user_question, then call exit_plan_mode with the complete plan as markdown starting with a # heading. After the user approves, carry out the plan.'

/**
 * Plan mode: while active, an outermost `tools/pre-execute` listener denies every tool that writes
 * (see `writesBecause`) before any policy or approval
 * prompt sees it. The listener exists only while plan mode is active, so normal dispatch pays nothing.
 */
export class PlanMode implements PlanModeService {
  private stop: (() => void) | undefined

  constructor(
    private readonly ctx: Context,
    private readonly tools: ToolRegistry,
    private readonly listed: readonly RegExp[],
    private readonly readOnly: readonly RegExp[] = [],
  ) {}

  get active(): boolean {
    return this.stop !== undefined
  }

  set(active: boolean): void {
    if (active === this.active) return
    if (active) {
      this.stop = this.ctx.on('tools/pre-execute', (exec: ToolExec, next: () => Promise<PreDecision>) => this.decide(exec, next), true)
    } else {
      const stop = this.stop!
      this.stop = undefined
      stop()
    }
    this.ctx.emit('plan/mode', active)
    this.ctx.emit('agent/notice', { source: 'plan-mode', text: active ? PLAN_MODE_TEXT : 'Plan mode has ended: every tool is available again.' })
  }

  private decide(exec: ToolExec, next: () => Promise<PreDecision>): PreDecision | Promise<PreDecision> {
    const why = writesBecause(this.tools, exec.name, this.listed, this.readOnly)
    if (why === undefined) return next()
    return {
      kind: 'deny',
      reason: `plan mode is active: "${exec.name}" ${why}, so it is denied until the user approves a plan. Use read-only tools to explore, then present your complete plan with exit_plan_mode.`,
    }
  }
}
