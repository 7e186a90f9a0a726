import { spawn } from 'node:child_process'
import { bench } from 'vitest'
import { compare, type Comparison } from '@cordage/testing'
import { setup } from './helpers.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

/** The candidate's median over the baseline's, as printed beside the target. */
const ratio = (result: Comparison) => {
  const [baseline, candidate] = Object.values(result)
  return `${(candidate! / baseline!).toFixed(2)}×`
}

/** The baseline: spawn the same shell directly and wait for it to close, discarding output. */
function raw(command: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.resume()
    child.stderr.resume()
    child.on('error', reject)
    child.on('close', () => resolve())
  })
}

bench(
  '(a) bash `true` through ctx.tools.execute vs a raw child_process.spawn',
  async () => {
    const { ctx, root } = await setup()
    const { execute } = ctx.get('tools')!
    const result = await compare(
      '(a) spawn-to-settled for `true`',
      { name: 'child_process.spawn + close', fn: () => raw('true', root) },
      [{ name: 'bash tool (spawn, process-tree sweep, capture, render)', fn: () => execute({ name: 'bash', arguments: { command: 'true' } }) }],
      { iterations: 10, rounds: 21, warmup: 3, unit: 'ms' },
    )
    console.log(`  bash true vs spawn: ratio ${ratio(result)} (target ≤ 1.1×)`)
  },
  once,
)

bench(
  '(b) 50 MB of stdout: bounded capture vs discarding it',
  async () => {
    const { ctx, root } = await setup()
    const { execute } = ctx.get('tools')!
    const command = `head -c ${50 * 1024 * 1024} /dev/zero | tr '\\0' a`
    const result = await compare(
      '(b) 50 MB stdout',
      { name: 'child_process.spawn, output discarded', fn: () => raw(command, root) },
      [{ name: 'bash tool, 30 000-byte head/tail capture', fn: () => execute({ name: 'bash', arguments: { command } }) }],
      { iterations: 1, rounds: 7, warmup: 1, unit: 'ms' },
    )
    console.log(`  bash 50 MB of stdout vs spawn: ratio ${ratio(result)} (target ≤ 1.2×)`)
  },
  once,
)
