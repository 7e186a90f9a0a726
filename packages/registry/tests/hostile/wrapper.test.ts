import { describe, expect, it } from 'vitest'
import type { ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { rawTool } from '../helpers.js'

// Reproductions: frozen wrapper-authored failures used to pass through as they were.

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner)
    Object.freeze(value)
  }
  return value
}

async function wrapped(authored: unknown): Promise<ToolExecutionResult> {
  const ctx = await createTestContext({ print: false })
  ctx.tools.register(rawTool('plain', () => 'body'))
  ctx.on('tools/execute', async () => authored as ToolExecutionResult)
  return ctx.tools.execute({ name: 'plain', arguments: {} })
}

describe('failures out of tools/execute wrappers are rebuilt', () => {
  it('a frozen failure carrying a value loses the value and keeps its message and code', async () => {
    const result = await wrapped(
      deepFreeze({
        isError: true,
        value: 'leaked',
        error: { message: 'cached failure', info: { name: 'X', code: 'CACHED' } },
        content: [{ type: 'text', text: 'Error: cached failure' }],
      }),
    )
    expect(result).toEqual({
      isError: true,
      error: { message: 'cached failure', info: { name: 'X', code: 'CACHED' } },
      content: [{ type: 'text', text: 'Error: cached failure' }],
    })
    expect('value' in result).toBe(false)
  })

  it('a frozen failure without `error` gets one (consumers read error.message)', async () => {
    const result = await wrapped(deepFreeze({ isError: true, content: [{ type: 'text', text: 'nope' }] }))
    expect(result.isError && typeof result.error.message).toBe('string')
    expect(result.content).toEqual([{ type: 'text', text: 'nope' }])
  })

  it('a frozen failure with invalid blocks keeps its message and shows it as Error: <message>', async () => {
    const result = await wrapped(deepFreeze({ isError: true, error: { message: 'bad blocks' }, content: [{ type: 'video', src: 'x' }] }))
    expect(result).toEqual({ isError: true, error: { message: 'bad blocks' }, content: [{ type: 'text', text: 'Error: bad blocks' }] })
  })

  it('a result whose accessors throw is INVALID_TOOL_OUTPUT', async () => {
    const result = await wrapped({
      get isError() {
        return true
      },
      get error() {
        throw new Error('boom')
      },
      content: [],
    })
    expect(result.isError && result.error.info?.code).toBe('INVALID_TOOL_OUTPUT')
  })

  it('a bare frozen { isError: true } becomes a well-formed, frozen failure', async () => {
    const result = await wrapped(deepFreeze({ isError: true, value: 1 }))
    expect(result).toEqual({ isError: true, error: { message: 'the tool failed' }, content: [{ type: 'text', text: 'Error: the tool failed' }] })
    expect(Object.isFrozen(result) && Object.isFrozen(result.content) && result.isError && Object.isFrozen(result.error)).toBe(true)
  })
})
