import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { TodoCounts, TodoItem, TodoList } from '@cordage/services'
import { todoWriteTool } from './todo-write.js'

/** Plugin name. */
export const name = 'todo'
/** Registers its tool in the registry. */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  allowParallelInProgress: boolean
  maxSessions: number
}

/** The config schema, validated at load; unknown keys fail the load. */
export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    allowParallelInProgress: Schema.boolean().default(true).description('Allow several in_progress steps at once (false: at most one).'),
    maxSessions: Schema.natural().min(1).default(1000).description('Sessions whose lists are kept; the least recently written is forgotten first.'),
  }),
)

export { checklist, normalizeTodos } from './todo-write.js'
export { InvalidTodosError } from './errors.js'

/** Registers `todo_write`; each session (`exec.agent`) has its own list, announced on `todo/changed`. */
export function apply(ctx: Context, config: Config): void {
  const lists = new Map<string | undefined, string>()
  const store = {
    replace(agent: string | undefined, todos: TodoItem[], counts: TodoCounts) {
      const serialized = JSON.stringify(todos)
      const changed = lists.get(agent) !== serialized
      // Re-inserting keeps the map in least-recently-written order for eviction.
      lists.delete(agent)
      lists.set(agent, serialized)
      if (lists.size > config.maxSessions) lists.delete(lists.keys().next().value)
      const list: TodoList = { todos, counts, ...(agent !== undefined && { agent }) }
      if (changed) ctx.emit('todo/changed', list)
    },
  }
  ctx.effect(() => () => lists.clear(), 'todo: forget lists')
  const tools: ToolRegistry = ctx.tools
  tools.register(todoWriteTool(store, config.allowParallelInProgress))
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
