import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { bench } from 'vitest'
import { defineTool } from '@cordage/core'
import { compare, createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

// A `read` that does no I/O, so the figures are the policy's own cost: canonicalising the path (one lstat
// per segment, twice) and matching globs.
const read = defineTool({
  name: 'read',
  description: 'Pretends to read a file.',
  parameters: Schema.object({ path: Schema.string().required() }),
  output: { schema: Schema.object({ path: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.path }] },
  paths: [{ pointer: '/path', access: 'read' }],
  execute: (args) => ({ path: args.path }),
})

async function dispatcher(root: string, rules?: Policy.RuleConfig[]) {
  const ctx = await createTestContext()
  ctx.tools.register(read)
  if (rules) await ctx.plugin(Policy, { root, rules })
  const { execute } = ctx.get('tools')!
  return () => execute({ name: 'read', arguments: { path: './src/lib/deep/file.ts' } })
}

bench(
  'path rules: cost per call of canonicalising and matching the path',
  async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'policy-bench-')))
    mkdirSync(join(root, 'src', 'lib', 'deep'), { recursive: true })
    writeFileSync(join(root, 'src', 'lib', 'deep', 'file.ts'), '')
    try {
      const path = (glob: string) => ({ path: glob, action: 'deny' as const })
      const variants = [
        {
          name: 'a `when` glob on /path (text, not a boundary)',
          fn: await dispatcher(root, [{ tool: 'read', when: [{ pointer: '/path', glob: 'secret.txt' }], action: 'deny' }]),
        },
        { name: '1 path rule', fn: await dispatcher(root, [path('secret.txt')]) },
        { name: '5 path rules', fn: await dispatcher(root, ['secret.txt', '.env*', 'vault/**', '/etc/**', '**/*.pem'].map(path)) },
      ]
      const result = await compare('read of ./src/lib/deep/file.ts', { name: 'no policy', fn: await dispatcher(root) }, variants, { iterations: 2000 })
      console.log(
        `  path rule overhead: ${(result['1 path rule']! - result['no policy']!).toFixed(2)} µs/call (1 rule), ${(result['5 path rules']! - result['no policy']!).toFixed(2)} µs/call (5 rules)`,
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  },
  once,
)
