import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { defineTool, type ContentBlock } from '@cordage/core'
import type { Context } from 'cordis'

/** `repeat { unit, count }` returns `unit.repeat(count)` rendered as one text block. */
export const repeatTool = (name = 'repeat') =>
  defineTool({
    name,
    description: 'Repeats a unit of text.',
    parameters: Schema.object({ unit: Schema.string().required(), count: Schema.natural().required() }),
    output: { schema: Schema.string(), render: (_args, value) => [{ type: 'text', text: value }] as ContentBlock[] },
    execute: (args) => args.unit.repeat(args.count),
  })

/** A plugin registering the given tool definitions. */
export const toolsPlugin = (...definitions: ReturnType<typeof repeatTool>[]) => ({
  name: 'test-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    for (const definition of definitions) ctx.tools.register(definition)
  },
})

export async function tempDir(prefix = 'cordage-spill-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix))
}

export async function listFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort()
  } catch {
    return []
  }
}

export function textOf(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n')
}
