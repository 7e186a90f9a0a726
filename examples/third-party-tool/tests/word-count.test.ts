import { describe, expect, it } from 'vitest'
import { contentText } from '@cordage/core'
import { createTestContext, testToolContract } from '@cordage/testing'
import wordCount from '../src/index.js'

// The shared conformance suite, exactly as a published package runs it.
testToolContract(wordCount, {
  config: { top: 3 },
  cases: [
    { tool: 'word_count', arguments: { text: 'the cat and the hat' } },
    { tool: 'word_count', arguments: { text: '' } },
    { name: 'a text over the limit', tool: 'word_count', arguments: { text: 'x'.repeat(1_000_001) }, expect: 'error' },
    { name: 'a number for text', tool: 'word_count', arguments: { text: 42 }, expect: 'error' },
  ],
})

describe('word_count', () => {
  async function load(config: object = {}) {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(wordCount, config)
    return { ctx, fiber }
  }

  it('counts words, lines and characters and lists the most frequent words, ties alphabetically', async () => {
    const { ctx } = await load({ top: 2 })
    const result = await ctx.tools.execute({ name: 'word_count', arguments: { text: 'The cat saw the dog.\nA dog? The end — it’s done.' } })
    expect(result.isError).toBe(false)
    expect(!result.isError && result.value).toEqual({
      words: 11,
      lines: 2,
      characters: 48,
      frequent: [
        { word: 'the', count: 3 },
        { word: 'dog', count: 2 },
      ],
    })
    expect(contentText(result.content)).toBe('11 words, 2 lines, 48 characters; most frequent: the (3), dog (2)')
  })

  it('keeps case apart when configured to', async () => {
    const { ctx } = await load({ caseSensitive: true, top: 1 })
    const result = await ctx.tools.execute({ name: 'word_count', arguments: { text: 'the The the the x' } })
    expect(!result.isError && result.value).toMatchObject({ words: 5, frequent: [{ word: 'the', count: 3 }] })
  })

  it('refuses a text over maxCharacters with TEXT_TOO_LONG and a hint the model can act on', async () => {
    const { ctx } = await load({ maxCharacters: 10 })
    const result = await ctx.tools.execute({ name: 'word_count', arguments: { text: 'ü'.repeat(11) } })
    expect(result.isError).toBe(true)
    expect(result.isError && result.error.info?.code).toBe('TEXT_TOO_LONG')
    expect(contentText(result.content)).toContain('the text has 11 characters; word_count takes at most 10 (split it')
    // Ten characters (not ten UTF-16 units or bytes) still pass.
    expect((await ctx.tools.execute({ name: 'word_count', arguments: { text: 'ü'.repeat(10) } })).isError).toBe(false)
  })

  it('rejects a config typo or a wrong type with INVALID_CONFIG before it registers anything', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(wordCount, { tpo: 3 } as object)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('did you mean "top"'),
    })
    await expect(ctx.plugin(wordCount, { top: -1 })).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
    expect(ctx.tools.list()).toEqual([])
  })

  it('unregisters word_count when the plugin is unloaded', async () => {
    const { ctx, fiber } = await load()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(['word_count'])
    await fiber.dispose()
    expect(ctx.tools.list()).toEqual([])
    const after = await ctx.tools.execute({ name: 'word_count', arguments: { text: 'a' } })
    expect(after.isError && after.error.info?.code).toBe('UNKNOWN_TOOL')
  })
})
