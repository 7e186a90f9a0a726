import type { ToolExecutionToken } from '@cordage/core'
import type { AgentRunEvent, ChildRunCaller } from '@cordage/services'
import { SubagentError } from './errors.js'

/**
 * What a root run spends across every child it starts, directly or through nested subagents, workflows
 * and programs: child runs (charged before each starts), and the model turns and tokens of the root and
 * its children (charged as each request reports its usage, `agent/usage`).
 */
export type BudgetResource = 'children' | 'turns' | 'tokens'

/** A limit per resource; an absent one is not limited. */
export type BudgetLimits = Partial<Record<BudgetResource, number>>

const SPENT_AS: Record<BudgetResource, string> = { children: 'started {n} subagent runs', turns: 'used {n} model turns', tokens: 'used {n} tokens' }

/** One root run's spending against its limits. */
export class RunBudget {
  private readonly spent: Record<BudgetResource, number> = { children: 0, turns: 0, tokens: 0 }

  constructor(private readonly limits: BudgetLimits) {}

  /** Set once turns or tokens went over their limit: no child starts after that. */
  private exhausted: SubagentError | undefined

  /** Charges `amount`, or throws `RUN_BUDGET_EXCEEDED` (charging nothing) when it would go over the limit or the budget is spent. */
  charge(resource: BudgetResource, amount = 1): void {
    if (this.exhausted) throw this.exhausted
    const limit = this.limits[resource]
    const next = this.spent[resource] + amount
    if (limit !== undefined && next > limit) throw this.exceeded(resource, this.spent[resource], limit)
    this.spent[resource] = next
  }

  /**
   * Records what was already spent (a model request that happened), and returns `RUN_BUDGET_EXCEEDED`
   * once the total is over the limit; from then on `charge` refuses every child.
   */
  spend(resource: BudgetResource, amount: number): SubagentError | undefined {
    this.spent[resource] += amount
    const limit = this.limits[resource]
    if (limit !== undefined && this.spent[resource] > limit) this.exhausted ??= this.exceeded(resource, this.spent[resource], limit)
    return this.exhausted
  }

  private exceeded(resource: BudgetResource, spent: number, limit: number): SubagentError {
    return new SubagentError(
      'RUN_BUDGET_EXCEEDED',
      `this run has already ${SPENT_AS[resource].replace('{n}', String(spent))}, its whole budget (budget.${resource} ${limit} per run, counted across nested subagents, workflows and programs); finish with what you have, or tell the user the budget was reached`,
    )
  }

  /** How much of `resource` was charged. */
  used(resource: BudgetResource): number {
    return this.spent[resource]
  }
}

/**
 * The budgets of root runs. A child of a child draws on its parent's budget (the run table passes it
 * down); a child of a top-level caller draws on that caller's agent run while one is in progress (the
 * agent loop announces its runs with `agent/run`, so one `cordage run` or one chat message is one root
 * run), else on the outermost tool call it came from (an MCP client's or a host's call), else on a budget
 * of its own.
 */
export class RootBudgets {
  private readonly runs = new Map<string, { budget: RunBudget; active: number }>()
  // Keyed by dispatch tokens (unregistered symbols): a budget lives as long as its call is referenced.
  private readonly calls = new WeakMap<ToolExecutionToken, RunBudget>()

  constructor(
    private readonly limits: BudgetLimits,
    /** Whether `agent` is a child run of this plugin (whose runs are not root runs). */
    private readonly isChild: (agent: string) => boolean,
  ) {}

  /** Follows `agent/run`: a top-level agent's run opens a budget, its end closes it. */
  observe(event: AgentRunEvent): void {
    if (event.agent !== undefined && this.isChild(event.agent)) return
    const key = event.agent ?? ''
    const run = this.runs.get(key)
    if (event.type === 'start') {
      if (run) run.active++
      else this.runs.set(key, { budget: new RunBudget(this.limits), active: 1 })
    } else if (run && --run.active === 0) {
      this.runs.delete(key)
    }
  }

  /** The budget of the top-level agent run of `agent` in progress, if any. */
  ofRun(agent: string | undefined): RunBudget | undefined {
    return this.runs.get(agent ?? '')?.budget
  }

  /** The budget a child started by the top-level `caller` draws on. */
  forTopLevel(caller: ChildRunCaller): RunBudget {
    const run = this.runs.get(caller.agent ?? '')
    if (run) return run.budget
    if (caller.root === undefined) return new RunBudget(this.limits)
    let budget = this.calls.get(caller.root)
    if (!budget) this.calls.set(caller.root, (budget = new RunBudget(this.limits)))
    return budget
  }
}
