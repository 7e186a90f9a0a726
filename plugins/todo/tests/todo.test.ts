import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import type { TodoList } from '@cordage/services'
import { createTestContext, testToolContract } from '@cordage/testing'
import * as TodoPlugin from '../src/index.js'

const a = { id: '1', content: 'a', status: 'pending' }
const b = { id: '2', content: 'b', status: 'in_progress' }

testToolContract(TodoPlugin, {
  cases: [
    { tool: 'todo_write', arguments: { todos: [] } },
    { tool: 'todo_write', arguments: { todos: [a, b] } },
    { tool: 'todo_write', arguments: { todos: [a, a] }, expect: 'error' },
    { tool: 'todo_write', arguments: { todos: [{ ...a, status: 'done' }] }, expect: 'error' },
  ],
})

async function setup(config: object = {}) {
  const ctx = await createTestContext({ print: false })
  const fiber = await ctx.plugin(TodoPlugin, config)
  const changes: TodoList[] = []
  ctx.on('todo/changed', (list) => void changes.push(list))
  const write = (todos: unknown[], agent?: string) => ctx.tools.execute({ name: 'todo_write', arguments: { todos }, ...(agent && { agent }) })
  return { ctx, fiber, changes, write }
}

describe('todo_write', () => {
  it('refuses a config with a misspelled key at load, naming the plugin and the nearest key', async () => {
    const ctx = await createTestContext({ print: false })
    const typo: object = { maxSesions: 5 }
    await expect(ctx.plugin(TodoPlugin, typo)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^todo: .*maxSesions.*maxSessions/),
    })
    expect(ctx.tools.get('todo_write')).toBeUndefined()
  })

  it('returns the list with counts, rendered as a checklist', async () => {
    const { write } = await setup()
    const result = await write([a, b, { id: '3', content: '  c  ', status: 'completed' }])
    if (result.isError) throw new Error(result.error.message)
    expect(result.value).toEqual({ todos: [a, b, { id: '3', content: 'c', status: 'completed' }], counts: { pending: 1, inProgress: 1, completed: 1 } })
    expect(contentText(result.content)).toMatchInlineSnapshot(`
      "Updated todo list: 1 pending, 1 in progress, 1 completed.
      [ ] a
      [~] b
      [x] c"
    `)
  })

  it('accepts an empty list', async () => {
    const { write } = await setup()
    const result = await write([])
    expect(contentText(result.content)).toBe('Updated todo list: 0 pending, 0 in progress, 0 completed.')
  })

  it.each([
    ['blank content', [{ ...a, content: '   ' }], 'INVALID_TODOS', 'invalid todos: todos[0].content is blank; describe the step'],
    ['a repeated id', [a, { ...b, id: '1' }], 'INVALID_TODOS', 'invalid todos: duplicate id "1"; give each step its own id'],
    ['an unknown status', [{ ...a, status: 'done' }], 'INVALID_ARGS', undefined],
    ['an extra key', [{ ...a, priority: 'high' }], 'INVALID_ARGS', undefined],
    ['a missing id', [{ content: 'a', status: 'pending' }], 'INVALID_ARGS', undefined],
    ['over 100 items', Array.from({ length: 101 }, (_, index) => ({ ...a, id: String(index) })), 'INVALID_ARGS', undefined],
  ])('rejects %s', async (_title, todos, code, message) => {
    const { write, changes } = await setup()
    const result = await write(todos)
    expect(result.isError && result.error.info?.code).toBe(code)
    if (message) expect(result.isError && result.error.message).toBe(message)
    expect(changes).toEqual([])
  })

  it('limits in_progress steps to one when configured', async () => {
    const { write } = await setup({ allowParallelInProgress: false })
    const result = await write([b, { ...b, id: '3' }])
    expect(result.isError && result.error.message).toBe('invalid todos: at most one step may be in_progress (got 2)')
    expect((await write([a, b])).isError).toBe(false)
  })

  it('keeps one list per session and announces only changes', async () => {
    const { write, changes } = await setup()
    await write([a], 'agent-1')
    await write([a], 'agent-1')
    await write([a], 'agent-2')
    await write([{ ...a, status: 'completed' }], 'agent-1')
    await write([b])
    expect(changes.map((change) => [change.agent, change.todos.map((todo) => todo.status).join()])).toEqual([
      ['agent-1', 'pending'],
      ['agent-2', 'pending'],
      ['agent-1', 'completed'],
      [undefined, 'in_progress'],
    ])
    expect(changes[3]).not.toHaveProperty('agent')
  })

  it('forgets the least recently written session past maxSessions', async () => {
    const { write, changes } = await setup({ maxSessions: 2 })
    await write([a], 's1')
    await write([a], 's2')
    await write([a], 's3')
    // s1 was forgotten: the same list is new again; s3 was kept: no change.
    await write([a], 's1')
    await write([a], 's3')
    expect(changes.map((change) => change.agent)).toEqual(['s1', 's2', 's3', 's1'])
  })

  it('unloading removes the tool; a reloaded plugin starts with no lists', async () => {
    const { ctx, fiber, write, changes } = await setup()
    await write([a])
    await fiber.dispose()
    expect(ctx.tools.get('todo_write')).toBeUndefined()
    await ctx.plugin(TodoPlugin, {})
    await write([a])
    expect(changes).toHaveLength(2)
  })
})
