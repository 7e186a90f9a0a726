import { describe, expect, it } from 'vitest'
import type { JsonSchemaNode, ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { rawTool } from '../helpers.js'

// Reproductions: each of these made `ctx.tools.execute` reject, or fail without a code, before the fix.

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : undefined)

function deepArray(depth: number): unknown[] {
  const root: unknown[] = []
  let node = root
  for (let i = 0; i < depth; i++) {
    const next: unknown[] = []
    node.push(next)
    node = next
  }
  return root
}

// A recursive schema: ajv's compiled validator recurses once per level.
const tree: Record<string, JsonSchemaNode> = { node: { type: 'array', items: { $ref: '#/$defs/node' } } }
const recursiveParameters: JsonSchemaNode = { type: 'object', properties: { tree: { $ref: '#/$defs/node' } }, $defs: tree }
const recursiveOutput: JsonSchemaNode = { $ref: '#/$defs/node', $defs: tree }

describe('hostile input never makes execute reject', () => {
  it('a name whose toString throws is an UNKNOWN_TOOL failure', async () => {
    const ctx = await createTestContext({ print: false })
    const name = {
      toString: () => {
        throw new Error('toString exploded')
      },
    }
    const result = await ctx.tools.execute({ name: name as never, arguments: {} })
    expect(result.isError).toBe(true)
    expect(code(result)).toBe('UNKNOWN_TOOL')
    expect(Object.isFrozen(result)).toBe(true)
  })

  it('a signal that is not an AbortSignal is INVALID_ARGS, not a TypeError later', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(rawTool('slow', () => 1, { timeoutMs: 1000 }))
    const result = await ctx.tools.execute({ name: 'slow', arguments: {}, signal: { aborted: false } as never })
    expect(code(result)).toBe('INVALID_ARGS')
  })

  it('a validator stack overflow on a 100 000-deep argument is INVALID_ARGS', async () => {
    const ctx = await createTestContext({ print: false })
    let ran = false
    ctx.tools.register(
      rawTool(
        'deep_args',
        () => {
          ran = true
          return []
        },
        { parameters: recursiveParameters },
      ),
    )
    const result = await ctx.tools.execute({ name: 'deep_args', arguments: { tree: deepArray(100_000) } })
    expect(code(result)).toBe('INVALID_ARGS')
    expect(result.isError && result.error.message).toMatch(/could not be validated/)
    expect(ran).toBe(false)
  })

  it('a validator stack overflow on a 100 000-deep value is INVALID_TOOL_OUTPUT', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register({
      ...rawTool('deep_value', () => deepArray(100_000)),
      output: { schema: recursiveOutput, render: () => [{ type: 'text', text: 'deep' }] },
    })
    const result = await ctx.tools.execute({ name: 'deep_value', arguments: {} })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
  })

  it('an invalid post-execute decision that cannot be stringified is a coded failure', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(rawTool('plain', () => 1))
    ctx.on('tools/post-execute', async () => ({ kind: 'weird', n: 1n }) as never)
    const result = await ctx.tools.execute({ name: 'plain', arguments: {} })
    expect(code(result)).toBe('INVALID_TOOL_OUTPUT')
  })
})
