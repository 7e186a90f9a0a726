/** The state of one todo item. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed'

/** One item of an agent's todo list. */
export interface TodoItem {
  id: string
  content: string
  status: TodoStatus
}

/** How many items are in each state. */
export interface TodoCounts {
  pending: number
  inProgress: number
  completed: number
}

/** A session's todo list after a `todo_write`; `agent` is the calling agent's id (absent for the default session). */
export interface TodoList {
  agent?: string
  todos: TodoItem[]
  counts: TodoCounts
}
