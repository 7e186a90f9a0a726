import { describe, expect, it } from 'vitest'
import type { ToolExecutionResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : undefined)

describe('odd execute input', () => {
  it('a symbol name is UNKNOWN_TOOL and an input whose getters throw is a coded failure', async () => {
    const ctx = await createTestContext({ print: false })
    expect(code(await ctx.tools.execute({ name: Symbol('x') as never, arguments: {} }))).toBe('UNKNOWN_TOOL')
    const input = {
      name: 'x',
      get arguments() {
        throw new Error('getter exploded')
      },
    }
    const result = await ctx.tools.execute(input)
    expect(result.isError).toBe(true)
    expect(code(result)).toBeTypeOf('string')
  })

  it('an input whose name getter throws still resolves to a coded failure', async () => {
    const ctx = await createTestContext({ print: false })
    const input = {
      get name(): string {
        throw new Error('name exploded')
      },
      arguments: {},
    }
    const result = await ctx.tools.execute(input)
    expect(code(result)).toBe('TOOL_FAILED')
    expect(ctx.logs.some((log) => log.name === 'tools' && log.text.includes('name exploded'))).toBe(true)
  })
})
