import { describe, expect, it } from 'vitest'
import type { ToolExec } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { echo } from './helpers.js'

describe('ctx.tools.wouldDeny', () => {
  it("answers with the guards' reason for the same caller, running no listener and no body", async () => {
    const ctx = await createTestContext()
    ctx.tools.register(echo)
    const seen: ToolExec[] = []
    let listened = 0
    ctx.on('tools/pre-execute', (_exec, next) => (listened++, next()))
    ctx.tools.guard((exec) => {
      seen.push(exec)
      return (exec.arguments as { message?: string }).message === 'secret' ? 'secret is off limits' : undefined
    })
    const parent = Symbol('parent')
    expect(ctx.tools.wouldDeny({ name: 'echo', arguments: { message: 'secret' }, parent, agent: 'child' })).toBe('secret is off limits')
    expect(ctx.tools.wouldDeny({ name: 'echo', arguments: { message: 'public' } })).toBeUndefined()
    expect(listened).toBe(0)
    expect(seen[0]).toMatchObject({ name: 'echo', arguments: { message: 'secret' }, parent, agent: 'child' })
    expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0]!.arguments)).toBe(true)
    expect(seen[0]!.token).not.toBe(seen[1]!.token)
  })

  it('denies arguments that are not JSON and a guard that throws (fails closed); without guards nothing is denied', async () => {
    const ctx = await createTestContext()
    expect(ctx.tools.wouldDeny({ name: 'echo', arguments: { when: new Date() } })).toBeUndefined()
    ctx.tools.guard(() => undefined)
    expect(ctx.tools.wouldDeny({ name: 'echo', arguments: { when: new Date() } })).toMatch(/^the arguments are not JSON: /)
    ctx.tools.guard(() => {
      throw new Error('broken rule')
    })
    expect(ctx.tools.wouldDeny({ name: 'echo', arguments: {} })).toBe('a guard failed, so the call was denied: broken rule')
  })
})
