import { describe, expect, it } from 'vitest'
import { createPostListener } from '../src/enforce.js'
import { compileRules } from '../src/rules.js'
import { setup, textOf } from './helpers.js'

describe('post-execution rules', () => {
  it('redact-value hides a field from programs and the content is re-rendered from the redacted value', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/token'] }])
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(result.isError).toBe(false)
    if (result.isError) return
    expect(result.value).toEqual({
      user: 'ada',
      items: [
        { name: 'a', secret: 's1' },
        { name: 'b', secret: 's2' },
      ],
    })
    expect(result.value).not.toHaveProperty('token')
    expect(textOf(result.content)).toBe(JSON.stringify(result.value))
    expect(textOf(result.content)).not.toContain('tok-SECRET')
    expect(Object.isFrozen(result.value)).toBe(true)
  })

  it('redacts through wildcards and can write a replacement instead of removing', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/items/*/secret', '/token'], replacement: '[redacted]' }])
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(result.isError === false && result.value).toEqual({
      user: 'ada',
      token: '[redacted]',
      items: [
        { name: 'a', secret: '[redacted]' },
        { name: 'b', secret: '[redacted]' },
      ],
    })
    expect(textOf(result.content)).not.toMatch(/tok-SECRET|s1|s2/)
  })

  it('a redaction that breaks the output schema fails the call instead of leaking', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/user'] }])
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(result.isError).toBe(true)
    expect(result.isError && result.error.info?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(result).not.toHaveProperty('value')
    expect(textOf(result.content)).not.toContain('tok-SECRET')
  })

  it('replace-content changes what the model sees but leaves the value intact (presentation only)', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'replace-content', content: 'Account details are hidden.' }])
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(result.content).toEqual([{ type: 'text', text: 'Account details are hidden.' }])
    expect(result.isError === false && (result.value as { token: string }).token).toBe('tok-SECRET')
  })

  it('block turns the result into a DENIED failure whose content is the feedback', async () => {
    const { ctx } = await setup([
      { tool: 'run_command', when: [{ pointer: '/command', regex: '^cat ' }], action: 'block', feedback: 'Use the read tool to read files.' },
    ])
    const blocked = await ctx.tools.execute({ name: 'run_command', arguments: { command: 'cat a.txt' } })
    expect(blocked.isError && blocked.error.info?.code).toBe('DENIED')
    expect(blocked.content).toEqual([{ type: 'text', text: 'Use the read tool to read files.' }])
    expect(blocked).not.toHaveProperty('value')
    const passed = await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } })
    expect(passed.isError).toBe(false)
  })

  it('rules apply to nested calls too, unless direct: true', async () => {
    const parent = Symbol('run_code')
    const everywhere = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/token'] }])
    const nested = await everywhere.ctx.tools.execute({ name: 'account', arguments: {}, parent })
    expect(nested.isError === false && nested.value).not.toHaveProperty('token')
    const directOnly = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/token'], direct: true }])
    const nestedExempt = await directOnly.ctx.tools.execute({ name: 'account', arguments: {}, parent })
    expect(nestedExempt.isError === false && nestedExempt.value).toHaveProperty('token', 'tok-SECRET')
    const direct = await directOnly.ctx.tools.execute({ name: 'account', arguments: {} })
    expect(direct.isError === false && direct.value).not.toHaveProperty('token')
  })

  it('fails closed when redaction and content replacement both match one result', async () => {
    const { ctx } = await setup([
      { tool: 'account', action: 'redact-value', pointers: ['/token'] },
      { tool: 'account', action: 'replace-content', content: 'hidden' },
    ])
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(result.isError && result.error.info?.code).toBe('DENIED')
    expect(textOf(result.content)).toContain('cannot replace the content of a result whose value is also replaced')
  })

  it('overrides an inner listener: its content replacement cannot undo a block or redaction', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'redact-value', pointers: ['/token'] }])
    ctx.on('tools/post-execute', async (_exec, _result, next) => ({
      ...(await next()),
      content: [{ type: 'text', text: 'tok-SECRET' }],
      additionalContexts: [{ source: 'inner', text: 'kept' }],
    }))
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(textOf(result.content)).not.toContain('tok-SECRET')
    expect(result.additionalContexts).toEqual([{ source: 'inner', text: 'kept' }])
  })

  it('fails closed: a post rule that throws withholds the result', async () => {
    const listener = createPostListener(compileRules([{ tool: '*', when: [{ pointer: '/x', equals: 1 }], action: 'block', feedback: 'x' }]))
    const exec = {
      token: Symbol('t'),
      callId: 'c',
      name: 'account',
      signal: new AbortController().signal,
      get arguments(): never {
        throw new Error('boom')
      },
    }
    const result = { isError: false as const, value: 1, content: [] }
    expect(await listener(exec, result, async () => ({ kind: 'accept' }))).toEqual({
      kind: 'block',
      feedback: 'policy rule 0 (block *) failed, so the result was withheld: boom',
    })
  })
})
