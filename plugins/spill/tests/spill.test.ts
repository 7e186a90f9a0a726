import { readFile, stat, writeFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Spill, type Config } from '../src/index.js'
import { listFiles, repeatTool, tempDir, textOf, toolsPlugin } from './helpers.js'

async function setup(config: Partial<Config> = {}) {
  const dir = join(await tempDir(), 'spill')
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin(repeatTool(), repeatTool('read')))
  const fiber = await ctx.plugin(Spill, { dir, ...config })
  return { ctx, dir, fiber }
}

describe('generic spill', () => {
  it('bounds a 1 MB output to a preview within maxInlineBytes and saves exactly the original text', async () => {
    const { ctx, dir } = await setup()
    const line = 'the quick brown fox jumps over the lazy dog 0123456789\n'
    const count = Math.ceil(1_048_576 / line.length)
    const result = await ctx.tools.execute({ name: 'repeat', arguments: { unit: line, count }, callId: 'call_1' })
    expect(result.isError).toBe(false)
    const preview = textOf(result.content)
    expect(result.content).toHaveLength(1)
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(50_000)
    const match = /\(Omitted (\d+) bytes\. Full output: (.+?)\. Read it with read offset\/limit or grep\.\)/.exec(preview)!
    expect(match).not.toBeNull()
    const path = match[2]!
    expect(isAbsolute(path)).toBe(true)
    expect(path.startsWith(dir + '/')).toBe(true)
    expect(await readFile(path, 'utf8')).toBe(line.repeat(count))
    expect(Number(match[1])).toBe(Buffer.byteLength(line) * count - Buffer.byteLength(preview.replace(match[0], '').replace(/\n\n/g, '')))
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    // Presentation only: programs still get the whole value.
    expect(result.isError === false && result.value).toBe(line.repeat(count))
  })

  it('keeps multi-byte characters valid at both cuts', async () => {
    const { ctx } = await setup({ maxInlineBytes: 4_096, headBytes: 1_001, tailBytes: 1_002 })
    const unit = 'a€😀é'
    const result = await ctx.tools.execute({ name: 'repeat', arguments: { unit, count: 10_000 } })
    const preview = textOf(result.content)
    expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(4_096)
    expect(preview).not.toContain('\uFFFD')
    expect(Buffer.from(preview, 'utf8').toString('utf8')).toBe(preview)
    const [head, , tail] = preview.split('\n\n')
    const full = unit.repeat(10_000)
    expect(full.startsWith(head!)).toBe(true)
    expect(full.endsWith(tail!)).toBe(true)
    expect(head!.length).toBeGreaterThan(100)
  })

  it('leaves nested calls and the read tool untouched', async () => {
    const { ctx, dir } = await setup({ maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    const nested = await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'x', count: 10_000 }, parent: Symbol('run_code') })
    expect(textOf(nested.content)).toBe('x'.repeat(10_000))
    const read = await ctx.tools.execute({ name: 'read', arguments: { unit: 'y', count: 10_000 } })
    expect(textOf(read.content)).toBe('y'.repeat(10_000))
    expect(await listFiles(dir)).toEqual([])
  })

  it('leaves small results, blocks and non-text content alone, and bounds a large value replacement', async () => {
    const { ctx, dir } = await setup({ maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    const image = defineTool({
      name: 'image',
      description: 'Text plus an image.',
      parameters: Schema.object({}),
      output: {
        schema: Schema.string(),
        render: (_args, value) => [
          { type: 'text', text: value },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        ],
      },
      execute: () => 'z'.repeat(10_000),
    })
    await ctx.plugin(toolsPlugin(image as never))
    ctx.on('tools/post-execute', async (exec, _result, next) => {
      const args = exec.arguments as { unit?: string }
      if (args.unit === 'V') return { kind: 'accept', value: 'v'.repeat(10_000) }
      if (args.unit === 'B') return { kind: 'block', feedback: 'b'.repeat(10_000) }
      return next()
    })
    expect(textOf((await ctx.tools.execute({ name: 'repeat', arguments: { unit: 's', count: 100 } })).content)).toBe('s'.repeat(100))
    expect(textOf((await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'B', count: 1 } })).content)).toBe('b'.repeat(10_000))
    expect(textOf((await ctx.tools.execute({ name: 'image', arguments: {} })).content)).toBe('z'.repeat(10_000) + '\n[image]')
    expect(await listFiles(dir)).toEqual([])
    // A replaced value is re-rendered by the registry, then bounded like any other result.
    const replaced = await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'V', count: 1 } })
    expect(replaced.isError === false && replaced.value).toBe('v'.repeat(10_000))
    expect(textOf(replaced.content)).toContain('(Omitted ')
    expect(Buffer.byteLength(textOf(replaced.content))).toBeLessThanOrEqual(2_000)
    expect(await listFiles(dir)).toHaveLength(1)
  })

  it('bounds the text of failed results too (their error message stays whole)', async () => {
    const { ctx, dir } = await setup({ maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    const failing = defineTool({
      name: 'failing',
      description: 'Always fails loudly.',
      parameters: Schema.object({}),
      output: { schema: Schema.string(), render: (_args, value) => [{ type: 'text', text: value }] },
      execute: () => {
        throw new Error('e'.repeat(10_000))
      },
    })
    await ctx.plugin(toolsPlugin(failing as never))
    const result = await ctx.tools.execute({ name: 'failing', arguments: {} })
    expect(result.isError).toBe(true)
    expect(result.isError && result.error.message).toBe('e'.repeat(10_000))
    expect(Buffer.byteLength(textOf(result.content))).toBeLessThanOrEqual(2_000)
    expect(await listFiles(dir)).toHaveLength(1)
  })

  it('keeps the original content and logs a warning when storage fails (fails open)', async () => {
    const parent = await tempDir()
    const dir = join(parent, 'not-a-dir')
    await writeFile(dir, 'occupied')
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin(repeatTool()))
    await ctx.plugin(Spill, { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    const result = await ctx.tools.execute({ name: 'repeat', arguments: { unit: 'q', count: 5_000 } })
    expect(result.isError).toBe(false)
    expect(textOf(result.content)).toBe('q'.repeat(5_000))
    expect(ctx.logs.some((log) => log.type === 'warn' && log.name === 'spill' && log.text.includes('keeping it inline'))).toBe(true)
  })

  it('rejects a preview larger than maxInlineBytes at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Spill, { maxInlineBytes: 2_000, headBytes: 1_500, tailBytes: 500 })).rejects.toThrow(
      /headBytes \(1500\) \+ tailBytes \(500\) must be less than maxInlineBytes \(2000\)/,
    )
    await expect(ctx.plugin(Spill, { maxInlineBytes: 10 })).rejects.toThrow(/1024/)
  })
})
