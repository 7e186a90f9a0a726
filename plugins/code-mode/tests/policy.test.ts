import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { contentText, defineTool } from '@cordage/core'
import * as Policy from '@cordage/plugin-policy'
import { Spill } from '@cordage/plugin-spill'
import { failureOf, lookup, setup, valueOf } from './helpers.js'

const secret = defineTool({
  name: 'secret',
  description: 'Returns an account with a token.',
  parameters: Schema.object({}),
  output: {
    schema: Schema.object({ user: Schema.string().required(), token: Schema.string() }),
    render: (_a, v) => [{ type: 'text', text: `${v.user} ${v.token ?? '(no token)'}` }],
  },
  execute: () => ({ user: 'ada', token: 's3cr3t' }),
})

const big = defineTool({
  name: 'big',
  description: 'Returns a large text with presentation metadata.',
  parameters: Schema.object({}),
  output: {
    schema: Schema.object({ text: Schema.string().required() }),
    render: (_a, v) => [{ type: 'text', text: v.text }],
    presentationMeta: (_a, v) => ({ length: v.text.length }),
  },
  execute: () => ({ text: 'x'.repeat(20_000) }),
})

describe('policy inside programs', () => {
  it('applies a post-execute value replacement: the program receives the replaced value', async () => {
    const { ctx, run } = await setup([secret])
    ctx.on('tools/post-execute', async (exec, result, next) => {
      const decision = await next()
      if (exec.name !== 'secret' || result.isError) return decision
      return { kind: 'accept', value: { user: (result.value as any).user } }
    })
    expect(valueOf(await run('return await tools.secret({})')).result).toEqual({ user: 'ada' })
  })

  it('applies the policy plugin: redact-value removes the field, block and deny reject with ToolCallError', async () => {
    const { ctx, run } = await setup([secret, lookup])
    await ctx.plugin(Policy, {
      rules: [
        { tool: 'secret', action: 'redact-value', pointers: ['/token'] },
        { tool: 'lookup', when: [{ pointer: '/id', equals: 13 }], action: 'block', feedback: 'user 13 is off limits' },
        { tool: 'lookup', when: [{ pointer: '/id', equals: 666 }], action: 'deny', reason: 'not that one' },
      ],
    })
    const value = valueOf(
      await run(`
      const account = await tools.secret({})
      const errors = []
      for (const id of [13, 666]) {
        try { await tools.lookup({ id }) } catch (error) { errors.push([error.name, error.toolName, error.message]) }
      }
      return { account, hasToken: 'token' in account, errors, ok: (await tools.lookup({ id: 1 })).name }
    `),
    ).result
    expect(value).toEqual({
      account: { user: 'ada' },
      hasToken: false,
      errors: [
        ['ToolCallError', 'lookup', 'user 13 is off limits'],
        ['ToolCallError', 'lookup', 'not that one'],
      ],
      ok: 'user-1',
    })
  })

  it('fails the run with the ToolCallError when a guard denial goes uncaught', async () => {
    const { ctx, run } = await setup([lookup])
    ctx.tools.guard((exec) => (exec.parent !== undefined ? 'nested lookups are disabled' : undefined))
    const failure = failureOf(await run('await tools.lookup({ id: 1 })'))
    expect(failure.message).toMatch(/^run_code failed \(runtime\): ToolCallError: nested lookups are disabled/)
  })
})

describe('nested calls and presentation', () => {
  it('gives nested calls no presentationMeta and no spill, while direct calls get both (spill plugin loaded)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'code-mode-spill-'))
    const { ctx, run, results } = await setup([big])
    await ctx.plugin(Spill, { dir, maxInlineBytes: 4000, headBytes: 1000, tailBytes: 1000 })

    const direct = await ctx.tools.execute({ name: 'big', arguments: {} })
    expect(direct.meta).toEqual({ length: 20_000 })
    expect(contentText(direct.content)).toMatch(/Omitted \d+ bytes\. Full output: /)
    const spilled = (await readdir(dir)).length
    expect(spilled).toBe(1)

    const program = valueOf(await run('const { text } = await tools.big({}); return text.length'))
    expect(program.result).toBe(20_000)
    const nested = results.filter((entry) => entry.exec.parent !== undefined)
    expect(nested).toHaveLength(1)
    expect(nested[0].result.isError).toBe(false)
    expect('meta' in nested[0].result).toBe(false)
    expect(contentText(nested[0].result.content)).toBe('x'.repeat(20_000))
    expect((await readdir(dir)).length).toBe(spilled)
    await rm(dir, { recursive: true, force: true })
  })
})
