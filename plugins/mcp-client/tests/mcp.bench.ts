import { bench, describe } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { McpBridge } from '../src/bridge.js'
import { FIXTURE } from './helpers.js'

// Bridged call (ctx.tools.execute of mcp__x__echo) vs the SDK Client calling the same server process
// directly (the bridge's own connection, so both paths share one child and one pipe); small result.
const ctx = await createTestContext({ print: false })
const bridge = new McpBridge(ctx.tools, plugin.Config.parse({ name: 'x', transport: 'stdio', command: process.execPath, args: [FIXTURE] }), ctx.logger('bench'))
await bridge.connection.start()
const client = bridge.connection.sdkClient!
// listTools primes the Client's outputSchema validators, so the direct path validates output too.
await client.listTools()
const execute = ctx.tools.execute

type Key = 'direct' | 'bridged' | 'pairedDirect' | 'pairedBridged' | 'pairRatio' | 'pairOverhead'
const samples: Record<Key, number[]> = { direct: [], bridged: [], pairedDirect: [], pairedBridged: [], pairRatio: [], pairOverhead: [] }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
const fresh =
  (...keys: Key[]) =>
  (_task: unknown, mode?: string) => {
    if (mode === 'run') for (const key of keys) samples[key] = []
  }
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`

/** One direct call; returns its wall time in ms. */
async function direct(): Promise<number> {
  const start = performance.now()
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
  const time = performance.now() - start
  if (result.isError) throw new Error('direct call failed')
  return time
}

/** One bridged call; returns its wall time in ms. */
async function bridged(): Promise<number> {
  const start = performance.now()
  const result = await execute({ name: 'mcp__x__echo', arguments: { text: 'hi' } })
  const time = performance.now() - start
  if (result.isError) throw new Error(result.error.message)
  return time
}

let pairs = 0
describe('MCP call over stdio, small result', () => {
  const options = { time: 3_000, warmupTime: 500 }
  bench('direct: SDK Client.callTool', async () => void samples.direct.push(await direct()), { ...options, setup: fresh('direct') })
  bench('bridged: ctx.tools.execute(mcp__x__echo)', async () => void samples.bridged.push(await bridged()), { ...options, setup: fresh('bridged') })
  // Each pair makes one call of each kind back to back, alternating which goes first, so drift in
  // machine load and any order effect hit both alike; the per-pair ratios are the figures to trust.
  bench(
    'paired: one direct + one bridged call, order alternating',
    async () => {
      let d: number
      let b: number
      if (pairs++ & 1) {
        b = await bridged()
        d = await direct()
      } else {
        d = await direct()
        b = await bridged()
      }
      samples.pairedDirect.push(d)
      samples.pairedBridged.push(b)
      samples.pairRatio.push(b / d)
      samples.pairOverhead.push(b - d)
    },
    {
      time: 6_000,
      warmupTime: 500,
      setup: fresh('pairedDirect', 'pairedBridged', 'pairRatio', 'pairOverhead'),
      // Bench mode runs no afterAll hooks: report and clean up after the last task's measured run.
      teardown: (_task, mode) => {
        if (mode !== 'run') return
        const [d, b, pd, pb] = [median(samples.direct), median(samples.bridged), median(samples.pairedDirect), median(samples.pairedBridged)]
        process.stdout.write(
          `\nphased medians: direct ${us(d)}, bridged ${us(b)} (ratio ${(b / d).toFixed(3)})` +
            `\npaired (${samples.pairRatio.length} pairs): direct ${us(pd)}, bridged ${us(pb)} (ratio of medians ${(pb / pd).toFixed(3)}); ` +
            `median per-pair ratio ${median(samples.pairRatio).toFixed(3)} (target ≤ 1.15), median per-pair overhead ${us(median(samples.pairOverhead))}\n`,
        )
        void bridge.close()
      },
    },
  )
})
