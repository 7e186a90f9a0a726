import { describe, expect, it } from 'vitest'
import { listenerCount as listeners } from '@cordage/registry'
import { createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'
import { setup } from './helpers.js'

describe('rules are checked at load', () => {
  it.each([
    [{ tool: 'run_[', action: 'deny' }, /rules\[1\]\.tool: bad glob "run_\[": unclosed "\["/],
    [{ tool: '*', when: [{ pointer: '/command', regex: '(' }], action: 'deny' }, /rules\[1\]\.when\[0\]\.regex: bad regular expression/],
    [{ tool: '*', when: [{ pointer: 'command', equals: 'x' }], action: 'deny' }, /rules\[1\]\.when\[0\]\.pointer: bad JSON pointer: "command" must be empty or start with "\/"/],
    [{ tool: '*', when: [{ pointer: '/a', glob: 'x', regex: 'y' }], action: 'deny' }, /rules\[1\]\.when\[0\]: needs exactly one of equals, glob or regex \(got glob, regex\)/],
    [{ tool: '*', action: 'redact-value', pointers: ['/a~2'] }, /rules\[1\]\.pointers\[0\]: bad JSON pointer/],
    [{ tool: '*', action: 'redact-value', pointers: [''] }, /rules\[1\]\.pointers\[0\]: .*root/],
    [{ tool: '*', action: 'redact-value' }, /rules\[1\]\.pointers: must list at least one JSON pointer/],
    [{ tool: '*', action: 'block' }, /rules\[1\]\.feedback: is required for action "block"/],
    [{ tool: '*', action: 'deny', content: 'x' }, /rules\[1\]\.content: does not apply to action "deny"/],
  ])('rejects %j naming the rule and field', async (bad, message) => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Policy, { rules: [{ tool: 'ok', action: 'allow' }, bad] as never })).rejects.toThrow(message)
  })

  it('rejects an unknown action through the config schema', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Policy, { rules: [{ tool: '*', action: 'explode' }] as never })).rejects.toThrow(/action|explode/)
  })

  it('matches tool names with globs', () => {
    expect(Policy.globToRegExp('mcp__*__read_*').test('mcp__fs__read_file')).toBe(true)
    expect(Policy.globToRegExp('{read,write}').test('write')).toBe(true)
    expect(Policy.globToRegExp('web_?etch').test('web_fetch')).toBe(true)
    expect(Policy.globToRegExp('src/*.ts').test('src/a/b.ts')).toBe(false)
    expect(Policy.globToRegExp('src/**.ts').test('src/a/b.ts')).toBe(true)
  })
})

describe('policy lifecycle', () => {
  it('load → enforce → dispose: guard and listeners are gone', async () => {
    const { ctx, fiber } = await setup([
      { tool: 'run_command', action: 'deny' },
      { tool: 'account', action: 'ask' },
      { tool: 'account', action: 'redact-value', pointers: ['/token'] },
    ])
    expect(listeners(ctx, 'tools/pre-execute')).toBe(1)
    expect(listeners(ctx, 'tools/post-execute')).toBe(1)
    expect((await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } })).isError).toBe(true)
    await fiber.dispose()
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
    expect(listeners(ctx, 'tools/post-execute')).toBe(0)
    expect((await ctx.tools.execute({ name: 'run_command', arguments: { command: 'ls' } })).isError).toBe(false)
    const account = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(account.isError === false && account.value).toHaveProperty('token')
  })

  it('with no rules registers nothing', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(Policy, {})
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
  })
})
