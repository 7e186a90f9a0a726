import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Schema from 'schemastery'
import { bench } from 'vitest'
import { defineTool } from '@cordage/core'
import { compare, createTestContext } from '@cordage/testing'
import * as Policy from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

// A `read` that does no I/O, so the figures are the policy's own cost: resolving the path (cached until the
// file system changes where it looked) and matching globs.
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
      const baseline = { name: 'no policy', fn: await dispatcher(root) }
      const result = await compare('read of ./src/lib/deep/file.ts', baseline, variants, { iterations: 2000 })
      // Process CPU time per call, interleaved the same way: far less sensitive to other load on the machine than wall time.
      const cpu = new Map<string, number[]>([baseline, ...variants].map((variant) => [variant.name, []]))
      for (let round = 0; round < 15; round++) {
        for (const variant of round % 2 ? [baseline, ...variants].reverse() : [baseline, ...variants]) {
          const start = process.cpuUsage()
          for (let i = 0; i < 2000; i++) await variant.fn()
          const used = process.cpuUsage(start)
          cpu.get(variant.name)!.push((used.user + used.system) / 2000)
        }
      }
      const median = (name: string) => [...cpu.get(name)!].sort((a, b) => a - b)[7]!
      const over = (name: string) => (median(name) - median('no policy')).toFixed(2)
      console.log(
        [
          `  path rule overhead (wall): ${(result['1 path rule']! - result['no policy']!).toFixed(2)} µs/call (1 rule), ${(result['5 path rules']! - result['no policy']!).toFixed(2)} µs/call (5 rules)`,
          `  CPU per call (median of 15 rounds): no policy ${median('no policy').toFixed(2)} µs; overhead: \`when\` glob ${over(variants[0]!.name)} µs, 1 path rule ${over('1 path rule')} µs (target ≤ 3 µs), 5 path rules ${over('5 path rules')} µs`,
        ].join('\n'),
      )
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  },
  once,
)
