import { describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import type { ContentBlock } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { listenerCount } from '../src/cordis-seam.js'
import { echo, rawTool } from './helpers.js'

const shout = (content: ContentBlock[]): ContentBlock[] =>
  content.map((block) => (block.type === 'text' ? { type: 'text', text: block.text.toUpperCase() } : block))

/** A presenter plugin that upper-cases text and records the content it was shown. */
function presenter(seen: string[]) {
  return {
    name: 'shout',
    apply(ctx: Context) {
      ctx.on(
        'tools/present',
        async (_exec, _result, next) => {
          const content = await next()
          seen.push(content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
          return shout(content)
        },
        true,
      )
    },
  }
}

/** A post-execute plugin that prepends (as policy does) and replaces the content of `echo`. */
const rewriter = {
  name: 'rewriter',
  apply(ctx: Context) {
    ctx.on(
      'tools/post-execute',
      async (exec, _result, next) => {
        const decision = await next()
        if (exec.name !== 'echo' || decision.kind !== 'accept') return decision
        return { ...decision, content: [{ type: 'text', text: 'rewritten by policy' }] }
      },
      true,
    )
  },
}

describe('tools/present, the final presentation phase', () => {
  it.each([
    ['presenter first', true],
    ['presenter last', false],
  ])('runs after every post-execute decision (%s)', async (_label, presenterFirst) => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    const seen: string[] = []
    if (presenterFirst) await ctx.plugin(presenter(seen))
    await ctx.plugin(rewriter)
    if (!presenterFirst) await ctx.plugin(presenter(seen))
    const result = await ctx.tools.execute({ name: 'echo', arguments: { message: 'hi' } })
    expect(seen).toEqual(['rewritten by policy'])
    expect(result).toEqual({
      isError: false,
      value: { message: 'hi', length: 2 },
      content: [{ type: 'text', text: 'REWRITTEN BY POLICY' }],
      meta: { arg: 'hi', length: 2 },
    })
    expect(Object.isFrozen(result) && Object.isFrozen(result.content)).toBe(true)
  })

  it('sees direct results that post-execute accepted (failures included), not nested calls or blocks', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    ctx.tools.register(
      rawTool('broken', () => {
        throw new Error('tool failed')
      }),
    )
    const seen: string[] = []
    await ctx.plugin(presenter(seen))
    ctx.on('tools/post-execute', async (exec, _result, next) =>
      (exec.arguments as { message?: string }).message === 'block' ? { kind: 'block', feedback: 'blocked' } : next(),
    )
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'nested' }, parent: Symbol('outer') })).content).toEqual([
      { type: 'text', text: 'echo: nested' },
    ])
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'block' } })).content).toEqual([{ type: 'text', text: 'blocked' }])
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 7 } })).content).toEqual([
      { type: 'text', text: 'Error: invalid arguments for echo:\n  /message: must be string' },
    ])
    const failed = await ctx.tools.execute({ name: 'broken', arguments: {} })
    expect(failed.isError && failed.error.message).toBe('tool failed')
    expect(failed.content).toEqual([{ type: 'text', text: 'ERROR: TOOL FAILED' }])
    expect(seen).toEqual(['Error: tool failed'])
  })

  it('keeps the content as it was (and warns) when a presenter throws or returns malformed content', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    let mode: 'throw' | 'malformed' = 'throw'
    ctx.on('tools/present', async () => {
      if (mode === 'throw') throw new Error('presenter exploded')
      return [{ type: 'video' }] as never
    })
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'a' } })).content).toEqual([{ type: 'text', text: 'echo: a' }])
    mode = 'malformed'
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'b' } })).content).toEqual([{ type: 'text', text: 'echo: b' }])
    const warnings = ctx.logs.filter((log) => log.type === 'warn' && log.name === 'tools').map((log) => log.text)
    expect(warnings.some((text) => text.includes('presenter exploded'))).toBe(true)
    expect(warnings.some((text) => text.includes('unusable content'))).toBe(true)
  })

  it('unloading a presenter removes its listener', async () => {
    const ctx = await createTestContext({ print: false })
    ctx.tools.register(echo)
    const seen: string[] = []
    const fiber = await ctx.plugin(presenter(seen))
    expect(listenerCount(ctx, 'tools/present')).toBe(1)
    await fiber.dispose()
    expect(listenerCount(ctx, 'tools/present')).toBe(0)
    expect((await ctx.tools.execute({ name: 'echo', arguments: { message: 'x' } })).content).toEqual([{ type: 'text', text: 'echo: x' }])
    expect(seen).toEqual([])
  })
})
