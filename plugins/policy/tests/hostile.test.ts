import { describe, expect, it } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'
import { textOf, toolsPlugin } from './helpers.js'
import { code, setupPaths, workspace } from './path-helpers.js'

const { root } = workspace()

describe('decisions of several policies on one result', () => {
  const hide: Policy.RuleConfig = { tool: 'account', action: 'replace-content', content: 'Account details are hidden.' }
  const redact: Policy.RuleConfig = { tool: 'account', action: 'redact-value', pointers: ['/token'] }

  it.each([
    ['hiding policy loaded first', [hide], [redact]],
    ['redacting policy loaded first', [redact], [hide]],
  ])('a redaction never brings back content another policy hid (%s)', async (_order, first, second) => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin)
    await ctx.plugin(Policy, { rules: first })
    await ctx.plugin(Policy, { rules: second })
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(textOf(result.content)).not.toMatch(/ada|tok-SECRET|s1/)
    expect(code(result)).toBe('DENIED')
  })

  it('a redaction never brings back content an inner listener hid', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin)
    await ctx.plugin(Policy, { rules: [redact] })
    ctx.on('tools/post-execute', async (_exec, _result, next) => ({ ...(await next()), content: [{ type: 'text', text: 'hidden by a hook' }] }))
    const result = await ctx.tools.execute({ name: 'account', arguments: {} })
    expect(textOf(result.content)).not.toContain('ada')
    expect(code(result)).toBe('DENIED')
  })
})

describe('path globs are normalised like the paths they are matched against', () => {
  it.each([['vault//key.pem'], ['vault/./key.pem'], ['./vault//./key.pem/']])('%s denies a read of vault/key.pem', async (glob) => {
    const { ctx } = await setupPaths(root, [{ path: glob, action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'vault/key.pem' } }))).toBe('DENIED')
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'public.txt' } }))).toBe('OK')
  })

  it('an absolute glob with a doubled slash still matches', async () => {
    const { ctx } = await setupPaths(root, [{ path: `${root}//vault/**`, action: 'deny' }])
    expect(code(await ctx.tools.execute({ name: 'read', arguments: { path: 'vault/key.pem' } }))).toBe('DENIED')
  })

  it.each([['sub/../secret.txt'], ['../root/secret.txt'], [`${root}/sub/../secret.txt`]])(
    'a glob with a .. segment (%s), which no canonical path contains, fails the load',
    async (glob) => {
      const ctx = await createTestContext({ print: false })
      const error = await ctx.plugin(Policy, { root, rules: [{ path: glob, action: 'deny' }] }).then(
        () => undefined,
        (error) => error,
      )
      expect(error).toMatchObject({ code: 'INVALID_CONFIG' })
      expect(error.message).toMatch(/^policy: rules\[0\]\.path: .*"\.\."/)
    },
  )
})
