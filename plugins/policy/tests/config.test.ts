import { describe, expect, it } from 'vitest'
import { listenerCount as listeners } from '@cordage/registry'
import { createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'
import { globToRegExp } from '../src/glob.js'
import { setup } from './helpers.js'
import { setupPaths, workspace } from './path-helpers.js'

describe('rules are checked at load', () => {
  it.each([
    [{ tool: 'run_[', action: 'deny' }, /rules\[1\]\.tool: bad glob "run_\[": unclosed "\["/],
    [{ tool: '*', when: [{ pointer: '/command', regex: '(' }], action: 'deny' }, /rules\[1\]\.when\[0\]\.regex: bad regular expression/],
    [
      { tool: '*', when: [{ pointer: 'command', equals: 'x' }], action: 'deny' },
      /rules\[1\]\.when\[0\]\.pointer: bad JSON pointer: "command" must be empty or start with "\/"/,
    ],
    [
      { tool: '*', when: [{ pointer: '/a', glob: 'x', regex: 'y' }], action: 'deny' },
      /rules\[1\]\.when\[0\]: needs exactly one of equals, glob or regex \(got glob, regex\)/,
    ],
    [{ tool: '*', action: 'redact-value', pointers: ['/a~2'] }, /rules\[1\]\.pointers\[0\]: bad JSON pointer/],
    [{ tool: '*', action: 'redact-value', pointers: [''] }, /rules\[1\]\.pointers\[0\]: .*root/],
    [{ tool: '*', action: 'redact-value' }, /rules\[1\]\.pointers: must list at least one JSON pointer/],
    [{ tool: '*', action: 'block' }, /rules\[1\]\.feedback: is required for action "block"/],
    [{ tool: '*', action: 'deny', content: 'x' }, /rules\[1\]\.content: does not apply to action "deny"/],
  ])('rejects %j naming the rule and field', async (bad, message) => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Policy, { rules: [{ tool: 'ok', action: 'allow' }, bad] as never })).rejects.toThrow(message)
  })

  it.each([
    [{ tool: '*', path: '', action: 'deny' }, /rules\[1\]\.path: must be a non-empty glob/],
    [{ tool: '*', path: 'src/[', action: 'deny' }, /rules\[1\]\.path: bad glob "src\/\[": unclosed "\["/],
    [{ tool: '*', access: 'read', action: 'deny' }, /rules\[1\]\.access: only applies to a rule with a path/],
    [{ action: 'deny' }, /rules\[1\]\.tool: a tool-name glob or a path glob is required/],
  ])('rejects the path rule %j naming the rule and field', async (bad, message) => {
    const ctx = await createTestContext({ print: false })
    const error = await ctx.plugin(Policy, { rules: [{ tool: 'ok', action: 'allow' }, bad] as never }).then(
      () => undefined,
      (error) => error,
    )
    expect(error).toMatchObject({ code: 'INVALID_CONFIG' })
    expect(error.message).toMatch(message)
  })

  it.each([
    [{ rulez: [{ tool: '*', action: 'deny' }] }, 'policy: unknown key "rulez"; did you mean "rules"? (valid keys: rules, root)'],
    [{ rule: [{ tool: '*', action: 'deny' }] }, 'policy: unknown key "rule"; did you mean "rules"? (valid keys: rules, root)'],
    [
      { rules: [{ tool: 'read', whne: [{ pointer: '/path', glob: 'x' }], action: 'deny' }] },
      'policy: rules[0]: unknown key "whne"; did you mean "when"? (valid keys: tool, path, access, when, action, reason, feedback, pointers, replacement, content, direct)',
    ],
    [
      { rules: [{ tool: 'read', when: [{ pointer: '/path', glb: 'x' }], action: 'deny' }] },
      'policy: rules[0].when[0]: unknown key "glb"; did you mean "glob"? (valid keys: pointer, equals, glob, regex)',
    ],
    [{ rules: [{ path: 'x', acess: 'read', action: 'deny' }] }, /^policy: rules\[0\]: unknown key "acess"; did you mean "access"\?/],
    [{ rules: [{ path: 'x', access: 'exec', action: 'deny' }] }, /^policy: rules\[0\]\.access: expected/],
    [{ root: '/nonexistent/policy-root' }, /^policy: root: "\/nonexistent\/policy-root" cannot be resolved/],
  ])('a typo never silently disables the policy: %j fails the load', async (config, message) => {
    const ctx = await createTestContext({ print: false })
    const error = await ctx.plugin(Policy, config as never).then(
      () => undefined,
      (error) => error,
    )
    expect(error).toMatchObject({ code: 'INVALID_CONFIG' })
    expect(error.message).toMatch(message)
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
  })

  it('rejects an unknown action through the config schema', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Policy, { rules: [{ tool: '*', action: 'explode' }] as never })).rejects.toThrow(/action|explode/)
  })

  it('matches tool names with globs', () => {
    expect(globToRegExp('mcp__*__read_*').test('mcp__fs__read_file')).toBe(true)
    expect(globToRegExp('{read,write}').test('write')).toBe(true)
    expect(globToRegExp('web_?etch').test('web_fetch')).toBe(true)
    expect(globToRegExp('src/*.ts').test('src/a/b.ts')).toBe(false)
    expect(globToRegExp('src/**.ts').test('src/a/b.ts')).toBe(true)
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

  it('path rules: load → enforce → dispose leaves no guard or listener behind', async () => {
    const { root } = workspace()
    const { ctx, fiber } = await setupPaths(root, [{ path: 'secret.txt', action: 'deny' }])
    expect((await ctx.tools.execute({ name: 'read', arguments: { path: './secret.txt' } })).isError).toBe(true)
    await fiber.dispose()
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
    const after = await ctx.tools.execute({ name: 'read', arguments: { path: './secret.txt' } })
    expect(after.isError === false && after.value).toEqual({ text: 'TOP-SECRET\n' })
  })

  it('with no rules registers nothing', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(Policy, {})
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
  })
})
