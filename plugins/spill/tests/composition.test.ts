import { chmod, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Plugin } from 'cordis'
import * as Hooks from '@cordage/plugin-hooks'
import * as Policy from '@cordage/plugin-policy'
import { createTestContext } from '@cordage/testing'
import { Spill } from '../src/index.js'
import { listFiles, repeatTool, tempDir, textOf, toolsPlugin } from './helpers.js'

// spill, policy and hooks together: every load order must give byte-identical results.
const orders = [
  ['spill', 'policy', 'hooks'],
  ['spill', 'hooks', 'policy'],
  ['policy', 'spill', 'hooks'],
  ['policy', 'hooks', 'spill'],
  ['hooks', 'spill', 'policy'],
  ['hooks', 'policy', 'spill'],
] as const

async function run(order: readonly string[], root: string) {
  const dir = join(await tempDir(), 'spill')
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(toolsPlugin(repeatTool(), repeatTool('secret'), repeatTool('banned')))
  const plugins: Record<string, [Plugin, unknown]> = {
    spill: [Spill, { dir, maxInlineBytes: 2_000, headBytes: 500, tailBytes: 500 }],
    policy: [
      Policy,
      {
        rules: [
          { tool: 'secret', action: 'replace-content', content: 'hidden by policy' },
          { tool: 'banned', action: 'block', feedback: 'banned by policy' },
        ],
      },
    ],
    hooks: [Hooks, { cwd: root, hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: join(root, 'post.sh') }] }] } }],
  }
  for (const name of order) await ctx.plugin(...plugins[name]!)
  const call = async (name: string, unit: string) => {
    const result = await ctx.tools.execute({ name, arguments: { unit, count: 3_000 }, callId: `call_${name}_${unit}` })
    return { isError: result.isError, text: textOf(result.content).replaceAll(dir, '<dir>'), contexts: result.additionalContexts }
  }
  const results = [
    await call('repeat', 'a'), // large: spill bounds it; the hook adds context
    await call('repeat', 'R'), // the hook rewrites the output to a large text: spill bounds the rewrite
    await call('secret', 'R'), // policy's replace-content wins over the hook's rewrite
    await call('banned', 'a'), // policy blocks; the hook's context is kept
  ]
  // Side effects too: the same spill files with the same bytes, whatever the order.
  const files: Record<string, string> = {}
  for (const file of await listFiles(dir)) files[file] = await readFile(join(dir, file), 'utf8')
  return { results, files }
}

describe('spill + policy + hooks', () => {
  it('give identical results in all six load orders', async () => {
    const root = await tempDir('cordage-composition-')
    await writeFile(
      join(root, 'post.sh'),
      `#!/bin/sh
input=$(cat)
case "$input" in
  *'"unit":"R"'*) printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"%s"}}' "$(printf 'rewritten %.0s' $(seq 1 500))" ;;
  *) echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"checked by hook"}}' ;;
esac
`,
    )
    await chmod(join(root, 'post.sh'), 0o755)
    const runs = []
    for (const order of orders) runs.push(await run(order, root))
    for (const outcome of runs.slice(1)) expect(outcome).toEqual(runs[0])
    const [large, rewritten, secret, banned] = runs[0]!.results
    expect(Object.keys(runs[0]!.files)).toEqual(['repeat-call_repeat_R-output.txt', 'repeat-call_repeat_a-output.txt'])
    expect(runs[0]!.files['repeat-call_repeat_a-output.txt']).toBe('a'.repeat(3_000))
    expect(runs[0]!.files['repeat-call_repeat_R-output.txt']).toBe('rewritten '.repeat(500))
    expect(large!.text).toContain('(Omitted ')
    expect(Buffer.byteLength(large!.text)).toBeLessThanOrEqual(2_000)
    expect(large!.contexts).toEqual([{ source: 'hooks', text: 'checked by hook' }])
    expect(rewritten!.text.startsWith('rewritten rewritten')).toBe(true)
    expect(rewritten!.text).toContain('(Omitted ')
    expect(secret).toEqual({ isError: false, text: 'hidden by policy' })
    expect(banned).toEqual({ isError: true, text: 'banned by policy', contexts: [{ source: 'hooks', text: 'checked by hook' }] })
  }, 120_000)
})
