// Benchmarks against the tools a developer would run by hand, measured in the same run:
// grep and glob on a copy of the repository's node_modules/.pnpm vs rg directly, and a read near the end
// of a 100 MB file vs tail. The copy sits outside the repository, whose .gitignore ignores node_modules.
import { spawn } from 'node:child_process'
import { cp, mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rgPath } from '@vscode/ripgrep'
import { afterAll, bench, describe } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as fs from '../src/index.js'

const base = await mkdtemp(join(tmpdir(), 'cordage-fs-bench-'))
const tree = join(base, 'pnpm')
await cp(join(import.meta.dirname, '../../../node_modules/.pnpm'), tree, { recursive: true, verbatimSymlinks: true })
const big = join(base, 'big.log')
const LINES = 1_000_000
{
  const handle = await open(big, 'w')
  const block = Array.from({ length: 10_000 }, (_, i) => `entry ${String(i).padStart(5, '0')} ${'payload '.repeat(11)}`).join('\n') + '\n'
  for (let i = 0; i < LINES / 10_000; i++) await handle.write(block)
  await handle.close()
}

const ctx = await createTestContext({ print: false })
await ctx.plugin(fs, { root: base, maxResults: 100_000 })
const { execute } = ctx.tools

/** Runs a command without a shell and discards its output. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.on('data', () => {})
    child.on('error', reject)
    child.on('close', () => resolve())
  })
}

async function call(name: string, args: object): Promise<void> {
  const result = await execute({ name, arguments: args })
  if (result.isError) throw new Error(result.error.message)
}

const samples = new Map<string, number[]>()
function timed(label: string, fn: () => Promise<void>): () => Promise<void> {
  samples.set(label, [])
  return async () => {
    const start = performance.now()
    await fn()
    samples.get(label)!.push(performance.now() - start)
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN
const options = { iterations: 15, warmupIterations: 3, time: 0 }
const GREP = 'export function \\w+'
const OFFSET = LINES - 1000

describe('grep on node_modules/.pnpm', () => {
  bench(
    'grep tool (ripgrep path)',
    timed('grep tool', () => call('grep', { pattern: GREP, path: 'pnpm' })),
    options,
  )
  bench(
    'rg -n directly',
    timed('rg grep', () => run(rgPath, ['-n', '--no-require-git', GREP], tree)),
    options,
  )
})

describe('glob on node_modules/.pnpm', () => {
  bench(
    'glob tool (ripgrep path)',
    timed('glob tool', () => call('glob', { pattern: '*.d.ts', path: 'pnpm' })),
    options,
  )
  bench(
    'rg --files -g directly',
    timed('rg glob', () => run(rgPath, ['--files', '--no-require-git', '-g', '*.d.ts'], tree)),
    options,
  )
})

describe('read 1000 lines near the end of a 100 MB file', () => {
  bench(
    'read tool (offset)',
    timed('read tool', () => call('read', { path: 'big.log', offset: OFFSET, limit: 1000 })),
    options,
  )
  bench(
    'tail -n +K | head -n 1000',
    timed('tail +K', () => run('sh', ['-c', `tail -n +${OFFSET} big.log | head -n 1000`], base)),
    options,
  )
  bench(
    'tail -n 1000',
    timed('tail -n', () => run('tail', ['-n', '1000', 'big.log'], base)),
    options,
  )
})

afterAll(async () => {
  const m = Object.fromEntries([...samples].map(([label, values]) => [label, median(values)]))
  const line = (label: string, baseline: string) =>
    `${label.padEnd(10)} ${m[label]!.toFixed(1).padStart(8)} ms   ${baseline.padEnd(8)} ${m[baseline]!.toFixed(1).padStart(8)} ms   ratio ${(m[label]! / m[baseline]!).toFixed(2)}`
  console.log(
    [
      'medians (ms) and ratios, same run:',
      line('grep tool', 'rg grep'),
      line('glob tool', 'rg glob'),
      line('read tool', 'tail +K'),
      line('read tool', 'tail -n'),
    ].join('\n'),
  )
  await rm(base, { recursive: true, force: true })
})
