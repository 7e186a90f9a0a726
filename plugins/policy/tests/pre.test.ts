import { describe, expect, it } from 'vitest'
import { Service, type Context } from 'cordis'
import type { ToolExec } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'
import { createGuard } from '../src/enforce.js'
import { compileRules } from '../src/rules.js'
import { setup, textOf, toolsPlugin } from './helpers.js'

const code = (result: { isError: boolean; error?: { info?: { code: string } } }) => (result.isError ? result.error?.info?.code : 'OK')

describe('pre-execution rules', () => {
  it('denies by tool name with the configured reason', async () => {
    const { ctx } = await setup([{ tool: 'run_*', action: 'deny', reason: 'commands are disabled here' }])
    const result = await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: commands are disabled here')
    expect(code(await ctx.tools.execute({ name: 'account', arguments: {} }))).toBe('OK')
  })

  it.each([
    ['regex', { pointer: '/command', regex: '\\brm\\s+-rf\\b' }, { command: 'sudo rm -rf /' }, { command: 'rm file' }],
    ['glob', { pointer: '/path', glob: '/etc/**' }, { command: 'cat', path: '/etc/ssh/sshd_config' }, { command: 'cat', path: '/home/etc' }],
    ['equals', { pointer: '/force', equals: true }, { command: 'push', force: true }, { command: 'push', force: false }],
  ])('denies by argument (%s)', async (_kind, predicate, denied, allowed) => {
    const { ctx } = await setup([{ tool: 'run_command', when: [predicate], action: 'deny' }])
    const result = await ctx.tools.execute({ name: 'run_command', arguments: denied })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: denied by policy rule 0 (deny run_command)')
    expect(code(await ctx.tools.execute({ name: 'run_command', arguments: allowed }))).toBe('OK')
  })

  it('lets the first matching rule win (allow before a broader deny)', async () => {
    const { ctx } = await setup([
      { tool: 'run_command', when: [{ pointer: '/command', glob: 'git status*' }], action: 'allow' },
      { tool: 'run_command', action: 'deny', reason: 'only git status' },
    ])
    expect(code(await ctx.tools.execute({ name: 'run_command', arguments: { command: 'git status --short' } }))).toBe('OK')
    expect(code(await ctx.tools.execute({ name: 'run_command', arguments: { command: 'git push' } }))).toBe('DENIED')
  })

  it('keeps a deny even when an outer pre-execute listener answers allow without delegating', async () => {
    const { ctx } = await setup([{ tool: 'account', action: 'deny', reason: 'no' }])
    ctx.on('tools/pre-execute', () => ({ kind: 'allow' }), true)
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: no')
  })

  it('ask without an approval service denies', async () => {
    const { ctx } = await setup([{ tool: 'run_command', action: 'ask', reason: 'runs a command' }])
    const result = await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } })
    expect(code(result)).toBe('DENIED')
    expect(textOf(result.content)).toMatchInlineSnapshot(`"Error: approval required (runs a command), but no approval service is available"`)
  })

  it('ask goes to the approval service when there is one', async () => {
    const ctx = await createTestContext({ print: false })
    const asked: string[] = []
    class Approval extends Service {
      constructor(ctx: Context) {
        super(ctx, 'approval')
      }

      async request(exec: ToolExec, reason?: string): Promise<'allow' | 'deny'> {
        const command = (exec.arguments as { command: string }).command
        asked.push(`${command}: ${reason}`)
        return command === 'ls' ? 'allow' : 'deny'
      }
    }
    await ctx.plugin(Approval)
    await ctx.plugin(toolsPlugin)
    await ctx.plugin(Policy, { rules: [{ tool: 'run_command', action: 'ask', reason: 'runs a command' }] })
    expect(code(await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } }))).toBe('OK')
    expect(code(await ctx.tools.execute({ name: 'run_command', arguments: { command: 'rm' } }))).toBe('DENIED')
    expect(asked).toEqual(['ls: runs a command', 'rm: runs a command'])
  })

  it('applies to nested calls unless the rule says direct: true', async () => {
    const parent = Symbol('run_code')
    const everywhere = await setup([{ tool: 'run_command', action: 'deny' }])
    expect(code(await everywhere.ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' }, parent }))).toBe('DENIED')
    const directOnly = await setup([{ tool: 'run_command', action: 'deny', direct: true }])
    expect(code(await directOnly.ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' }, parent }))).toBe('OK')
    expect(code(await directOnly.ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } }))).toBe('DENIED')
  })

  it('fails closed: a rule that throws denies the call', () => {
    const rules = compileRules([{ tool: '*', when: [{ pointer: '/command', equals: 'ls' }], action: 'allow' }])
    const exec = {
      token: Symbol('t'),
      callId: 'c',
      name: 'run_command',
      signal: new AbortController().signal,
      get arguments(): never {
        throw new Error('boom')
      },
    }
    expect(createGuard(rules)(exec)).toBe('policy rule 0 (allow *) failed, so the call was denied: boom')
  })
})
