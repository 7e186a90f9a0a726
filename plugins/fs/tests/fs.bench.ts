// Benchmarks against the tools a developer would run by hand, measured in the same run in interleaved
// rounds: grep and glob on a copy of the repository's node_modules/.pnpm vs rg directly, and reads of a
// 100 MB file vs tail. The copy sits outside the repository, whose .gitignore ignores node_modules.
import { spawn } from 'node:child_process'
import { cp, mkdtemp, open, rm, stat, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { rgPath } from '@vscode/ripgrep'
import { afterAll, bench } from 'vitest'
import { compare, createTestContext, type Comparison } from '@cordage/testing'
import * as fs from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const options = { iterations: 1, rounds: 15, warmup: 2, unit: 'ms' as const }
const GREP = 'export function \\w+'
const LINES = 1_000_000
const OFFSET = LINES - 1000

const base = await mkdtemp(join(tmpdir(), 'cordage-fs-bench-'))
const tree = join(base, 'pnpm')
await cp(join(import.meta.dirname, '../../../node_modules/.pnpm'), tree, { recursive: true, verbatimSymlinks: true })
// Two copies of one 100 MB log: big.log unchanged (its line index may be kept), fresh.log touched before
// every read (a file that just changed is always counted again).
for (const name of ['big.log', 'fresh.log']) {
  const handle = await open(join(base, name), 'w')
  const block = Array.from({ length: 10_000 }, (_, i) => `entry ${String(i).padStart(5, '0')} ${'payload '.repeat(11)}`).join('\n') + '\n'
  for (let i = 0; i < LINES / 10_000; i++) await handle.write(block)
  await handle.close()
}
// A version is indexed only once it had settled for 2 s before it was counted.
await new Promise((resolve) => setTimeout(resolve, 2_100))

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

async function touched(path: string): Promise<void> {
  const now = new Date()
  await utimes(join(base, path), now, now)
}

const line = (result: Comparison, candidate: string, baseline: string, target: string) =>
  `  ${candidate.padEnd(44)} ${(result[candidate]! / 1000).toFixed(1).padStart(7)} ms vs ${baseline.padEnd(26)} ${(result[baseline]! / 1000).toFixed(1).padStart(7)} ms  ratio ${(result[candidate]! / result[baseline]!).toFixed(2)}× (target ${target})`

bench(
  'fs tools vs rg and tail',
  async () => {
    const grep = await compare(
      `grep ${GREP} on node_modules/.pnpm`,
      { name: 'rg -n', fn: () => run(rgPath, ['-n', '--no-require-git', GREP], tree) },
      [{ name: 'grep tool', fn: () => call('grep', { pattern: GREP, path: 'pnpm' }) }],
      options,
    )
    const glob = await compare(
      'glob *.d.ts on node_modules/.pnpm',
      { name: 'rg --files -g', fn: () => run(rgPath, ['--files', '--no-require-git', '-g', '*.d.ts'], tree) },
      [{ name: 'glob tool', fn: () => call('glob', { pattern: '*.d.ts', path: 'pnpm' }) }],
      options,
    )
    const near = await compare(
      `read 1 000 lines at line ${OFFSET} of a 100 MB file`,
      { name: 'tail -n +K | head', fn: () => run('sh', ['-c', `tail -n +${OFFSET} big.log | head -n 1000`], base) },
      [
        {
          name: 'read, file just changed (counted)',
          fn: () => touched('fresh.log').then(() => call('read', { path: 'fresh.log', offset: OFFSET, limit: 1000 })),
        },
        { name: 'read, unchanged file (line index)', fn: () => call('read', { path: 'big.log', offset: OFFSET, limit: 1000 }) },
      ],
      options,
    )
    const end = await compare(
      'the last 1 000 lines of a 100 MB file',
      { name: 'tail -n 1000', fn: () => run('tail', ['-n', '1000', 'big.log'], base) },
      [
        { name: 'read -1000, file just changed (counted)', fn: () => touched('fresh.log').then(() => call('read', { path: 'fresh.log', offset: -1000 })) },
        { name: 'read -1000, unchanged file (line index)', fn: () => call('read', { path: 'big.log', offset: -1000 }) },
      ],
      options,
    )
    if ((await stat(join(base, 'big.log'))).size !== 101_000_000) throw new Error('the log changed size')
    console.log(
      [
        '\nSummary (medians of interleaved rounds, same run):',
        line(grep, 'grep tool', 'rg -n', '≤ 1.2×'),
        line(glob, 'glob tool', 'rg --files -g', '≤ 1.15×'),
        line(near, 'read, file just changed (counted)', 'tail -n +K | head', '≤ 1.2×'),
        line(near, 'read, unchanged file (line index)', 'tail -n +K | head', '≤ 1.2×'),
        line(end, 'read -1000, file just changed (counted)', 'tail -n 1000', 'none'),
        line(end, 'read -1000, unchanged file (line index)', 'tail -n 1000', 'none'),
      ].join('\n'),
    )
  },
  once,
)

afterAll(async () => {
  await ctx.fiber.dispose()
  await rm(base, { recursive: true, force: true })
})
