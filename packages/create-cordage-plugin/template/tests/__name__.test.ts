import { describe, expect, it } from 'vitest'
import { codeOf, createTestContext, testToolContract, textOf, valueOf } from '@cordage/testing'
import plugin from '../src/index.js'

// The shared conformance suite: names, schemas, bad arguments as results, frozen valid values, pure renderers, unloading.
testToolContract(plugin, {
  config: { maxCharacters: 100 },
  cases: [
    { tool: '__tool__', arguments: { text: 'hello' } },
    { tool: '__tool__', arguments: { text: '' } },
    { name: 'a text over the limit', tool: '__tool__', arguments: { text: 'x'.repeat(101) }, expect: 'error' },
    { name: 'a number for text', tool: '__tool__', arguments: { text: 42 }, expect: 'error' },
  ],
})

describe('__tool__', () => {
  async function load(config: object = {}) {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(plugin, config)
    return { ctx, fiber }
  }

  it('returns the text in upper case and its length in code points', async () => {
    const { ctx } = await load()
    const result = await ctx.tools.execute({ name: '__tool__', arguments: { text: 'héllo 👋' } })
    expect(valueOf(result)).toEqual({ text: 'HÉLLO 👋', characters: 7 })
    expect(textOf(result)).toBe('HÉLLO 👋 (7 characters)')
  })

  it('refuses a text over maxCharacters with TEXT_TOO_LONG and says how to proceed', async () => {
    const { ctx } = await load({ maxCharacters: 3 })
    const result = await ctx.tools.execute({ name: '__tool__', arguments: { text: 'four' } })
    expect(codeOf(result)).toBe('TEXT_TOO_LONG')
    expect(textOf(result)).toBe('Error: the text has 4 characters; __tool__ takes at most 3 (split it and call __tool__ once per part)')
  })

  it('rejects a config typo with INVALID_CONFIG naming the nearest key, before registering anything', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(plugin, { maxCharacter: 3 } as object)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('did you mean "maxCharacters"'),
    })
    expect(ctx.tools.list()).toEqual([])
  })

  it('unregisters __tool__ when the plugin is unloaded', async () => {
    const { ctx, fiber } = await load()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['__tool__'])
    await fiber.dispose()
    expect(ctx.tools.list()).toEqual([])
  })
})
