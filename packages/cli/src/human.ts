import type { Context } from 'cordis'
import { CordageError, type ToolExec } from '@cordage/core'
import type { ApprovalService } from '@cordage/registry'
import type { Answer, InteractionService, PlanReview, TodoList } from '@cordage/services'
import type { Output } from './output.js'
import { summarize } from './progress.js'
import { PromptQueue, sanitize, type PromptIO } from './prompts.js'

/** How the CLI answers for its user. */
export interface HumanOptions {
  /** A person is at a terminal: prompt them. */
  interactive: boolean
  /** `--yes` / `--no`: answer every approval (and plan review) without asking. */
  preset?: 'yes' | 'no'
  output: Output
  /** Terminal streams and Ctrl-C handling for prompts (interactive only). */
  io?: Omit<PromptIO, 'print'>
}

function unavailable(exec: ToolExec, reason: string | undefined): CordageError {
  return new CordageError(
    'APPROVAL_UNAVAILABLE',
    `APPROVAL_UNAVAILABLE: "${exec.name}" needs approval${reason ? ` (${reason})` : ''}, but there is no terminal to ask on; rerun with --yes to allow such calls or --no to deny them`,
  )
}

/** The line shown above an approval prompt: the tool, its arguments (shortened) and the policy's reason. */
export function approvalSummary(output: Output, tool: string, args: unknown, reason: string | undefined): string {
  return `${output.style('yellow', '?')} ${output.style('bold', tool)} ${sanitize(summarize(JSON.stringify(args)))}${reason ? output.style('dim', ` (${sanitize(reason)})`) : ''}`
}

/** The `approval` service: a preset answer, a prompt (remembering "always" per tool), or a clear failure. */
export function createApproval(options: HumanOptions, queue: PromptQueue | undefined): ApprovalService {
  const always = new Set<string>()
  return {
    async request(exec, reason) {
      if (options.preset) return options.preset === 'yes' ? 'allow' : 'deny'
      if (!queue) throw unavailable(exec, reason)
      if (always.has(exec.name)) return 'allow'
      const summary = approvalSummary(options.output, exec.name, exec.arguments, reason)
      let answer: 'allow' | 'deny' | 'always'
      try {
        answer = await queue.approve(summary, exec.signal, () => always.has(exec.name))
      } catch {
        // Ctrl-C or a cancelled call: the call is denied (the interrupt itself stops the run).
        return 'deny'
      }
      if (answer === 'always') always.add(exec.name)
      return answer === 'deny' ? 'deny' : 'allow'
    },
  }
}

/** The `interaction` service: prompts on a terminal; headless, only a `--yes`/`--no` plan review. */
export function createInteraction(options: HumanOptions, queue: PromptQueue | undefined): InteractionService | undefined {
  if (queue) return { ask: (questions, signal) => queue.ask(questions, signal), approvePlan: (plan, signal) => queue.approvePlan(plan, signal) }
  if (!options.preset) return undefined
  return {
    ask(): Promise<Answer[]> {
      return Promise.reject(
        new CordageError(
          'INTERACTION_UNAVAILABLE',
          'ask_user_question: no user can be asked here (headless run); decide yourself, state your assumption, and carry on',
        ),
      )
    },
    async approvePlan(plan): Promise<PlanReview> {
      options.output.error(sanitize(plan))
      if (options.preset === 'yes') {
        options.output.error(options.output.style('dim', 'plan approved (--yes)'))
        return { approved: true }
      }
      return { approved: false, feedback: 'the plan was not approved (--no): nobody can approve plans in this run; report the plan as your final answer' }
    },
  }
}

/** A Cordis plugin providing `approval` and `interaction` for the CLI's user. */
export function humanPlugin(options: HumanOptions) {
  return {
    name: 'cli-human',
    apply(ctx: Context) {
      const queue =
        options.interactive && options.io ? new PromptQueue({ ...options.io, print: (text) => options.output.error(text) }, options.output) : undefined
      ctx.provide('approval', createApproval(options, queue))
      const interaction = createInteraction(options, queue)
      if (interaction) ctx.provide('interaction', interaction)
    },
  }
}

/** The todo list as the CLI prints it when it changes. */
export function formatTodos(list: TodoList, output: Output): string {
  const marks = { pending: output.style('dim', '[ ]'), in_progress: output.style('yellow', '[~]'), completed: output.style('green', '[x]') }
  const { pending, inProgress, completed } = list.counts
  const head = output.style('dim', `  todo: ${completed} done, ${inProgress} in progress, ${pending} pending`)
  return [
    head,
    ...list.todos.map((todo) => `    ${marks[todo.status]} ${todo.status === 'completed' ? output.style('dim', todo.content) : todo.content}`),
  ].join('\n')
}
