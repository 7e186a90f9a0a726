import Schema from 'schemastery'
import { defineTool, type ToolDefinition } from '@cordage/core'
import type { TodoCounts, TodoItem } from '@cordage/services'
import { InvalidTodosError } from './errors.js'

const Status = Schema.union(['pending', 'in_progress', 'completed'] as const)

const Item = Schema.object({
  id: Schema.string().min(1).max(100).required().description('A short stable id for the step ("1", "tests"); keep it while the step exists.'),
  content: Schema.string().max(1000).required().description('What the step does, imperative ("Run the tests").'),
  status: Status.required(),
})

const Parameters = Schema.object({
  todos: Schema.array(Item).max(100).required().description('The ENTIRE list.'),
})

const Output = Schema.object({
  todos: Schema.array(Item).required(),
  counts: Schema.object({
    pending: Schema.natural().required(),
    inProgress: Schema.natural().required(),
    completed: Schema.natural().required(),
  }).required(),
})

const MARK: Record<TodoItem['status'], string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' }

/** `[x] done`, `[~] doing`, `[ ] to do`, one line per item. */
export function checklist(todos: readonly TodoItem[]): string {
  return todos.map((todo) => `${MARK[todo.status]} ${todo.content}`).join('\n')
}

/** Checks and normalises a list (content trimmed); throws `INVALID_TODOS`. */
export function normalizeTodos(todos: readonly TodoItem[], allowParallelInProgress: boolean): { todos: TodoItem[]; counts: TodoCounts } {
  const ids = new Set<string>()
  const counts: TodoCounts = { pending: 0, inProgress: 0, completed: 0 }
  const result = todos.map((todo, index) => {
    const content = todo.content.trim()
    if (!content) throw new InvalidTodosError(`todos[${index}].content is blank; describe the step`)
    if (ids.has(todo.id)) throw new InvalidTodosError(`duplicate id "${todo.id}"; give each step its own id`)
    ids.add(todo.id)
    if (todo.status === 'pending') counts.pending++
    else if (todo.status === 'in_progress') counts.inProgress++
    else counts.completed++
    return { id: todo.id, content, status: todo.status }
  })
  if (!allowParallelInProgress && counts.inProgress > 1) throw new InvalidTodosError(`at most one step may be in_progress (got ${counts.inProgress})`)
  return { todos: result, counts }
}

/** What `todo_write` needs from its plugin: the per-session store. */
export interface TodoStore {
  replace(agent: string | undefined, todos: TodoItem[], counts: TodoCounts): void
}

/** `todo_write`: replaces the calling session's todo list. */
export function todoWriteTool(store: TodoStore, allowParallelInProgress: boolean): ToolDefinition {
  const inProgressRule = allowParallelInProgress
    ? 'Mark each step being worked on in_progress (several only when work really runs in parallel)'
    : 'Mark exactly one step in_progress while you work on it'
  return defineTool({
    name: 'todo_write',
    description: `Record and update a task list for the current work. Send the ENTIRE list every call: it REPLACES the previous list. Use it to plan multi-step work and show progress: one todo per concrete step before you start. ${inProgressRule}, and mark a step completed as soon as it is done (do not batch completions). Skip the list for trivial single-step tasks.`,
    parameters: Parameters,
    output: {
      schema: Output,
      render: (_args, value) => {
        const { pending, inProgress, completed } = value.counts
        const head = `Updated todo list: ${pending} pending, ${inProgress} in progress, ${completed} completed.`
        return [{ type: 'text', text: value.todos.length ? `${head}\n${checklist(value.todos)}` : head }]
      },
    },
    execute: (args, exec) => {
      const { todos, counts } = normalizeTodos(args.todos, allowParallelInProgress)
      store.replace(exec.agent, todos, counts)
      return { todos, counts }
    },
  })
}
