import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { defineTool } from '@cordage/core'
import { createTestContext, testToolContract } from '../src/index.js'

const upper = defineTool({
  name: 'to_upper',
  description: 'Upper-cases a text.',
  parameters: Schema.object({ text: Schema.string().required() }),
  output: { schema: Schema.string(), render: (_args, value) => [{ type: 'text', text: value }] },
  execute: ({ text }) => text.toUpperCase(),
})

testToolContract([upper], {
  cases: [
    { tool: 'to_upper', arguments: { text: 'abc' } },
    { name: 'a missing field fails', tool: 'to_upper', arguments: {}, expect: 'error' },
  ],
})

describe('createTestContext', () => {
  it('captures log records and loads the registry', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.logger('probe').warn('something odd')
    expect(ctx.logs).toContainEqual({ name: 'probe', type: 'warn', text: 'something odd' })
    expect(ctx.tools.list()).toEqual([])
  })

  it('passes registry config through', async () => {
    const ctx = await createTestContext({ registry: { timeoutGraceMs: 10 }, print: false })
    ctx.tools.register({ ...upper, name: 'stuck', timeoutMs: 5, execute: () => new Promise(() => {}) })
    const result = await ctx.tools.execute({ name: 'stuck', arguments: { text: 'x' } })
    expect(result.isError && result.error.info?.code).toBe('TOOL_TIMEOUT')
    // The body never settles: the call was abandoned after the configured grace period, not the default.
    expect(ctx.logs.some((log) => log.type === 'warn' && log.text.includes('did not settle within 10 ms'))).toBe(true)
  })
})
