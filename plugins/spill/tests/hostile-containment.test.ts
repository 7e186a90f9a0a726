import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import * as Policy from '@cordage/plugin-policy'
import { createTestContext } from '@cordage/testing'
import { Spill } from '../src/index.js'
import { listFiles, tempDir, textOf, toolsPlugin } from './helpers.js'

// Reproductions: with spill loaded before policy (as examples/coding-agent does), spill used to bound
// the result before policy decided, writing text a rule then removed, and left a large redacted value inline.

const MARKER = 'TOP-SECRET-TOKEN'

/** `leak { size }` returns a secret field next to a large body, rendered as JSON. */
const leak = (name: string) =>
  defineTool({
    name,
    description: 'Returns a secret and a large body.',
    parameters: Schema.object({ size: Schema.natural().required() }),
    output: {
      schema: Schema.object({ secret: Schema.string(), body: Schema.string().required() }),
      render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }],
    },
    execute: (args) => ({ secret: `${MARKER} `.repeat(20), body: 'b'.repeat(args.size) }),
  })

async function setup() {
  const dir = join(await tempDir(), 'spill')
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin(leak('fetch_page') as never, leak('dump_env') as never))
  await ctx.plugin(Spill, { dir, maxInlineBytes: 4_096, headBytes: 1_024, tailBytes: 1_024 })
  await ctx.plugin(Policy, {
    rules: [
      { tool: 'fetch_page', action: 'redact-value', pointers: ['/secret'] },
      { tool: 'dump_env', action: 'block', feedback: 'environment dumps are not allowed' },
    ],
  })
  return { ctx, dir }
}

async function spilledText(dir: string): Promise<string> {
  const files = await listFiles(dir)
  return (await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))).join('\n')
}

describe('spill loaded before policy', () => {
  it('bounds a large redact-value replacement like any other result, and the spill file holds no redacted text', async () => {
    const { ctx, dir } = await setup()
    const result = await ctx.tools.execute({ name: 'fetch_page', arguments: { size: 140_000 }, callId: 'call_1' })
    expect(result.isError === false && result.value).toEqual({ body: 'b'.repeat(140_000) })
    expect(Buffer.byteLength(textOf(result.content))).toBeLessThanOrEqual(4_096)
    expect(textOf(result.content)).toContain('(Omitted ')
    expect(textOf(result.content)).not.toContain(MARKER)
    expect(await listFiles(dir)).toEqual(['fetch_page-call_1-output.txt'])
    const spilled = await spilledText(dir)
    expect(spilled).toBe(JSON.stringify({ body: 'b'.repeat(140_000) }))
    expect(spilled).not.toContain(MARKER)
  })

  it('writes nothing for a blocked result', async () => {
    const { ctx, dir } = await setup()
    const result = await ctx.tools.execute({ name: 'dump_env', arguments: { size: 140_000 }, callId: 'call_2' })
    expect(result.isError && result.error.info?.code).toBe('DENIED')
    expect(textOf(result.content)).toBe('environment dumps are not allowed')
    expect(await listFiles(dir)).toEqual([])
  })
})
