import { bench, describe } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { FIXTURE } from './helpers.js'

// Bridged call (ctx.tools.execute of mcp__x__echo) vs the SDK Client calling the same server process
// directly (the bridge's own connection, so both paths share one child and one pipe); small result.
const ctx = await createTestContext({ print: false })
const bridge = new plugin.McpBridge(ctx.tools, plugin.Config.parse({ name: 'x', transport: 'stdio', command: process.execPath, args: [FIXTURE] }), ctx.logger('bench'))
await bridge.connection.start()
const client = bridge.connection.sdkClient!
// listTools primes the Client's outputSchema validators, so the direct path validates output too.
await client.listTools()
const execute = ctx.tools.execute

type Key = 'direct' | 'bridged' | 'pairedDirect' | 'pairedBridged'
const samples: Record<Key, number[]> = { direct: [], bridged: [], pairedDirect: [], pairedBridged: [] }
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
// CPU time of this process per call: far less sensitive to other load on the machine than wall time.
const cpu: Record<Key, number> = { direct: 0, bridged: 0, pairedDirect: 0, pairedBridged: 0 }
let cpuStart = process.cpuUsage()
const fresh = (...keys: Key[]) => (_task: unknown, mode?: string) => {
  if (mode !== 'run') return
  for (const key of keys) samples[key] = []
  cpuStart = process.cpuUsage()
}
const cpuPerCall = (key: Key) => () => {
  const used = process.cpuUsage(cpuStart)
  cpu[key] = (used.user + used.system) / 1000 / Math.max(1, samples[key].length)
}
const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`

async function direct(key: Key): Promise<void> {
  const start = performance.now()
  const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
  samples[key].push(performance.now() - start)
  if (result.isError) throw new Error('direct call failed')
}

async function bridged(key: Key): Promise<void> {
  const start = performance.now()
  const result = await execute({ name: 'mcp__x__echo', arguments: { text: 'hi' } })
  samples[key].push(performance.now() - start)
  if (result.isError) throw new Error(result.error.message)
}

describe('MCP call over stdio, small result', () => {
  const options = { time: 3_000, warmupTime: 500 }
  bench('direct: SDK Client.callTool', () => direct('direct'), { ...options, setup: fresh('direct'), teardown: (_task, mode) => { if (mode === 'run') cpuPerCall('direct')() } })
  bench('bridged: ctx.tools.execute(mcp__x__echo)', () => bridged('bridged'), { ...options, setup: fresh('bridged'), teardown: (_task, mode) => { if (mode === 'run') cpuPerCall('bridged')() } })
  // Alternating the two calls cancels drift in machine load between the phases above; its medians give the ratio.
  bench('paired: one direct + one bridged call', async () => {
    await direct('pairedDirect')
    await bridged('pairedBridged')
  }, {
    ...options,
    setup: fresh('pairedDirect', 'pairedBridged'),
    // Bench mode runs no afterAll hooks: report and clean up after the last task's measured run.
    teardown: (_task, mode) => {
      if (mode !== 'run') return
      const [d, b, pd, pb] = [median(samples.direct), median(samples.bridged), median(samples.pairedDirect), median(samples.pairedBridged)]
      process.stdout.write(`\nmedians: direct ${us(d)}, bridged ${us(b)} (ratio ${(b / d).toFixed(3)}); paired direct ${us(pd)}, bridged ${us(pb)}, ratio ${(pb / pd).toFixed(3)} (target ≤ 1.15), overhead ${us(pb - pd)}; CPU per call direct ${us(cpu.direct)}, bridged ${us(cpu.bridged)} (ratio ${(cpu.bridged / cpu.direct).toFixed(3)})\n`)
      void bridge.close()
    },
  })
})
