import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool, type ContentBlock } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import type { Context } from 'cordis'
import { Spill } from '../src/index.js'
import { listFiles, tempDir, textOf } from './helpers.js'

const PAGE = 5

function listTool() {
  return defineTool({
    name: 'list_items',
    description: 'Lists numbered items.',
    parameters: Schema.object({ count: Schema.natural().required() }),
    output: {
      schema: Schema.object({ items: Schema.array(Schema.string()).required() }),
      render: (_args, value) => [{ type: 'text', text: value.items.join('\n') }] as ContentBlock[],
    },
    execute: (args) => ({ items: Array.from({ length: args.count }, (_, i) => `item ${i} ${'-'.repeat(40)}`) }),
  })
}

function listen(ctx: Context) {
  ctx.on('tools/post-execute', async (exec, result, next) => {
    const decision = await next()
    if (exec.name !== 'list_items' || exec.parent !== undefined || result.isError || decision.kind !== 'accept' || decision.value !== undefined) return decision
    const items = (result.value as { items: string[] }).items
    const spill = ctx.get('spill')
    if (items.length <= PAGE || !spill) return decision
    // Asynchronous on purpose: generic spill must wait for this projection.
    await new Promise((resolve) => setTimeout(resolve, 20))
    const saved = await spill.save({ toolName: exec.name, callId: exec.callId, suggestedName: 'items.txt', text: items.join('\n') })
    const text = `${items.slice(0, PAGE).join('\n')}\n(${items.length - PAGE} more items. Full list: ${saved.path})`
    return { ...decision, content: [{ type: 'text', text }] }
  })
}

/**
 * A tool-owned projection like glob/grep: the value keeps every item, the renderer shows them all
 * (deliberately large), and the tool's own non-prepended listener replaces the content with the first
 * page plus the path of the full list it saved asynchronously. `inject` registers the listener once
 * `spill` is available (as plugins/fs does); `eager` registers it at load and looks `spill` up per call,
 * so in tool-first order it sits before spill's listener and only spill's prepend keeps spill outermost.
 */
const pagedPlugin = (mode: 'inject' | 'eager') => ({
  name: `paged-tool-${mode}`,
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register(listTool())
    if (mode === 'inject') ctx.inject(['spill'], listen)
    else listen(ctx)
  },
})

async function run(order: 'spill-first' | 'tool-first', mode: 'inject' | 'eager') {
  const dir = join(await tempDir(), 'spill')
  const ctx = await createTestContext({ print: false })
  const config = { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 }
  if (order === 'spill-first') {
    await ctx.plugin(Spill, config)
    await ctx.plugin(pagedPlugin(mode))
  } else {
    await ctx.plugin(pagedPlugin(mode))
    await ctx.plugin(Spill, config)
  }
  const result = await ctx.tools.execute({ name: 'list_items', arguments: { count: 1_000 }, callId: 'call_7' })
  const files = await listFiles(dir)
  const saved = await Promise.all(files.map((file) => readFile(join(dir, file), 'utf8')))
  return { result, dir, files, saved, text: textOf(result.content).replaceAll(dir, '<dir>') }
}

describe('load-order independence', () => {
  it('completes the tool-owned projection before generic spill, whichever plugin loads first', async () => {
    const spillFirst = await run('spill-first', 'inject')
    const toolFirst = await run('tool-first', 'inject')
    const eagerSpillFirst = await run('spill-first', 'eager')
    const eagerToolFirst = await run('tool-first', 'eager')
    for (const outcome of [spillFirst, toolFirst, eagerSpillFirst, eagerToolFirst]) {
      // Only the tool's own spill file exists: generic spill saw the paged content, not the full render.
      expect(outcome.files).toEqual(['list_items-call_7-items.txt'])
      expect(outcome.saved[0]!.split('\n')).toHaveLength(1_000)
      expect(outcome.text).toMatchInlineSnapshot(`
        "item 0 ----------------------------------------
        item 1 ----------------------------------------
        item 2 ----------------------------------------
        item 3 ----------------------------------------
        item 4 ----------------------------------------
        (995 more items. Full list: <dir>/list_items-call_7-items.txt)"
      `)
      expect(outcome.result.isError === false && (outcome.result.value as { items: string[] }).items).toHaveLength(1_000)
    }
    for (const outcome of [toolFirst, eagerSpillFirst, eagerToolFirst]) {
      expect(outcome.text).toBe(spillFirst.text)
      expect(outcome.saved).toEqual(spillFirst.saved)
    }
  })

  it('without the tool listener, generic spill bounds the full render instead (the check above is sensitive)', async () => {
    const dir = join(await tempDir(), 'spill')
    const ctx = await createTestContext({ print: false })
    await ctx.plugin({ name: 'bare', inject: ['tools'], apply: (scoped: Context) => void scoped.tools.register(listTool()) })
    await ctx.plugin(Spill, { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 })
    const result = await ctx.tools.execute({ name: 'list_items', arguments: { count: 1_000 }, callId: 'call_8' })
    expect(textOf(result.content)).toContain('(Omitted ')
    expect(await listFiles(dir)).toEqual(['list_items-call_8-output.txt'])
  })
})
