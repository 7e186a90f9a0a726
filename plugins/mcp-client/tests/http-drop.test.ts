import { afterEach, describe, expect, it } from 'vitest'
import type { ToolErrorResult } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { httpFixture, until } from './helpers.js'

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('mcp-client over HTTP when the server dies during a call', () => {
  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'fails the call with MCP_DISCONNECTED within 5 s, not at timeoutMs (%s)',
    async (signal) => {
      const server = await httpFixture()
      cleanups.push(() => server.child.kill('SIGKILL'))
      const ctx = await createTestContext({ print: false })
      const fiber = await ctx.plugin(plugin, {
        name: 'web',
        transport: 'http',
        url: server.url,
        timeoutMs: 60_000,
        reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      })
      cleanups.push(() => fiber.dispose())
      const call = ctx.tools.execute({ name: 'mcp__web__slow', arguments: { ms: 50_000 } })
      // Killed once the server runs the call.
      await until(() => server.events().some((line) => line.startsWith('call slow')), 20_000, 'the call to reach the server')
      const started = Date.now()
      server.child.kill(signal)
      const result = await call
      const elapsed = Date.now() - started
      expect((result as ToolErrorResult).error?.info?.code).toBe('MCP_DISCONNECTED')
      // A hang bound: the drop is seen within milliseconds; the call it ends would run 50 s.
      expect(elapsed).toBeLessThan(5_000)
    },
    30_000,
  )
})
