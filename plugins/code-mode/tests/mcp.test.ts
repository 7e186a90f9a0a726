import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as McpServer from '@cordage/plugin-mcp-server'
import { lookup, setup } from './helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

// Answered while the program still runs, not how fast: over loopback HTTP + SSE a quiet tools/list takes
// 10–170 ms on a loaded machine. The program has a minute of CPU, so only the cancel can end it in time.
const FLOOD = 'await tools.lookup({ id: 1 }); for (let i=0;i<10000;i++) (function loop(){ Promise.resolve().then(loop) })(); await new Promise(()=>{})'

describe('a hostile program behind `mcp serve`', () => {
  it('leaves tools/list answering while it runs, and the client cancel ends the run', async () => {
    const { ctx } = await setup([lookup], { cpuTimeMs: 60_000, timeoutMs: 60_000 })
    const fiber = await ctx.plugin(McpServer, { transport: 'http' })
    cleanups.push(() => fiber.dispose())
    const url = /listening on (\S+)/.exec(ctx.logs.map((record) => record.text).join('\n'))![1]!
    const client = new Client({ name: 'code-mode-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    cleanups.push(() => client.close())

    const controller = new AbortController()
    // The program calls lookup first: once that call is seen, the flood is under way.
    let floodStarted!: () => void
    const started = new Promise<void>((resolve) => (floodStarted = resolve))
    const runEnded = new Promise<{ code?: string }>((resolve) =>
      ctx.on('tools/result', (exec, result) => {
        if (exec.name === 'lookup') floodStarted()
        if (exec.name === 'run_code') resolve({ code: result.isError ? result.error.info?.code : undefined })
      }),
    )
    const flood = client.callTool({ name: 'run_code', arguments: { code: FLOOD } }, undefined, { signal: controller.signal, timeout: 60_000 })
    flood.catch(() => {})
    let running = true
    void runEnded.then(() => (running = false))
    await started
    for (let i = 0; i < 3; i++) {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toContain('run_code')
      expect(running).toBe(true)
    }
    controller.abort()
    await expect(flood).rejects.toThrow()
    expect((await runEnded).code).toBe('ABORTED')
  })
})
