import { chmod, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { defineTool, type ContentBlock } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import type { Context } from 'cordis'
import * as Hooks from '../src/index.js'

/** A fake `bash` tool: returns `{ stdout }` echoing the command. */
export const bashTool = defineTool({
  name: 'bash',
  description: 'Pretends to run a command.',
  parameters: Schema.object({ command: Schema.string().required() }),
  output: { schema: Schema.object({ stdout: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.stdout }] as ContentBlock[] },
  execute: (args) => ({ stdout: `output of ${args.command}` }),
})

export const toolsPlugin = { name: 'hook-test-tools', inject: ['tools'], apply: (ctx: Context) => void ctx.tools.register(bashTool) }

/** Writes an executable shell script into a fresh temp dir and returns its path and dir. */
export async function script(body: string, dir?: string): Promise<{ path: string; dir: string }> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), 'cordage-hooks-')))
  const path = join(root, `hook-${Math.random().toString(36).slice(2)}.sh`)
  await writeFile(path, `#!/bin/sh\n${body}\n`)
  await chmod(path, 0o755)
  return { path, dir: root }
}

export async function setup(config: Partial<Hooks.Config>) {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin)
  const fiber = await ctx.plugin(Hooks, config)
  return { ctx, fiber }
}

export const textOf = (content: readonly ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
export const codeOf = (result: { isError: boolean; error?: { info?: { code: string } } }) => (result.isError ? (result.error?.info?.code ?? 'ERROR') : 'OK')
export const pre = (command: string, extra: object = {}) => ({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' as const, command, ...extra }] }] })
export const post = (command: string, extra: object = {}) => ({ PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' as const, command, ...extra }] }] })
