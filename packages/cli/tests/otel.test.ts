import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestContext } from '@cordage/testing'
import McpClient from '@cordage/plugin-mcp-client'
import Otel from '@cordage/plugin-otel'
// The loopback OTLP/HTTP receiver and the SDK setup of the telemetry plugin's own tests.
import { startOtlpReceiver, type OtlpReceiver } from '../../../plugins/otel/tests/receiver.js'
import { startSdk } from '../../../plugins/otel/tests/sdk.js'
import { bin, cordage, echoPlugin, project } from './helpers.js'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver()
  cleanups.push(() => started.close())
  return started
}

describe('otel: in cordage.yml', () => {
  it('sets up the SDK, exports the spans and metrics of a call over OTLP/HTTP, and flushes before the process exits; OTEL_* wins over the file', async () => {
    const otlp = await receiver()
    const dir = project({ 'cordage.yml': 'otel:\n  serviceName: from-file\n  protocol: http/json\nplugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin })
    const outcome = await cordage(['call', 'echo', '{"text":"hi"}'], {
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'from-env', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
    })
    expect(outcome).toMatchObject({ code: 0, stdout: 'echo: hi\n' })
    // Exported before exit: nothing waits for the batch delay.
    expect(otlp.spans.map((span) => span.name)).toEqual(['execute_tool echo'])
    expect(otlp.spans[0]!.resource['service.name']).toBe('from-env')
    expect(otlp.requests.every((request) => request.contentType === 'application/x-protobuf')).toBe(true)
    expect(otlp.points.find((point) => point.metric === 'cordage.tool.calls')).toMatchObject({ value: 1, attributes: { 'gen_ai.tool.name': 'echo' } })
  })

  it('uses the file when the environment says nothing (endpoint, JSON encoding, service name)', async () => {
    const otlp = await receiver()
    const dir = project({
      'cordage.yml': `otel:\n  serviceName: from-file\n  protocol: http/json\n  endpoint: ${otlp.url}\nplugins:\n  ./echo.mjs: {}\n`,
      'echo.mjs': echoPlugin,
    })
    const outcome = await cordage(['call', 'echo', '{"text":"hi"}'], { cwd: dir, env: {} })
    expect(outcome.code).toBe(0)
    expect(otlp.spans.map((span) => [span.name, span.resource['service.name']])).toEqual([['execute_tool echo', 'from-file']])
    expect(otlp.requests.every((request) => request.contentType.startsWith('application/json'))).toBe(true)
  })

  it('a collector that never answers holds the exit for a bounded time, and says what was dropped', async () => {
    // Takes each export request and never answers it (a hung collector, a black-holed network).
    const held: ServerResponse[] = []
    const hung = createServer((_request, response) => void held.push(response))
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve))
    cleanups.push(async () => {
      for (const response of held) response.destroy()
      await new Promise((resolve) => hung.close(resolve))
    })
    const url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`
    const dir = project({ 'cordage.yml': `otel:\n  endpoint: ${url}\nplugins:\n  ./echo.mjs: {}\n`, 'echo.mjs': echoPlugin })
    const outcome = await cordage(['call', 'echo', '{"text":"hi"}'], { cwd: dir, env: {} })
    expect(outcome).toMatchObject({ code: 0, stdout: 'echo: hi\n' })
    expect(held.length).toBeGreaterThan(0)
    expect(outcome.stderr).toMatch(/collector did not take the last spans and metrics within 2000 ms; they are dropped/)
  })

  it('a bad otel section fails before anything starts, naming the key', async () => {
    const dir = project({ 'cordage.yml': 'otel:\n  protocl: http/json\n' })
    const outcome = await cordage(['tools'], { cwd: dir })
    expect(outcome.code).toBe(2)
    expect(outcome.stderr).toMatch(/otel.*protocl/)
    const grpc = project({ 'cordage.yml': 'otel: {}\n' })
    const refused = await cordage(['tools'], { cwd: grpc, env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/protocol "grpc" is not supported/)
  })
})

describe('otel: across processes', () => {
  it('an MCP call carries its traceparent in _meta, and `cordage mcp serve` continues the trace', async () => {
    const otlp = await receiver()
    const sdk = startSdk(otlp.url, 'protobuf', 'client')
    cleanups.push(() => sdk.shutdown())
    const dir = project({ 'cordage.yml': 'otel: {}\nplugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin })
    const ctx = await createTestContext()
    await ctx.plugin(Otel, {})
    const client = await ctx.plugin(McpClient, {
      name: 'srv',
      transport: 'stdio',
      command: process.execPath,
      args: [bin, 'mcp', 'serve'],
      cwd: dir,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: 'server', PATH: process.env.PATH ?? '' },
    })
    cleanups.push(() => client.dispose())
    const result = await ctx.tools.execute({ name: 'mcp__srv__echo', arguments: { text: 'across' } })
    expect(result.isError).toBe(false)
    await sdk.flush()
    // The server exports when it stops (its stdin closes with the client).
    await client.dispose()
    await otlp.waitFor(() => otlp.spans.some((span) => span.resource['service.name'] === 'server'))
    const outer = otlp.spans.find((span) => span.name === 'execute_tool mcp__srv__echo')!
    const inner = otlp.spans.find((span) => span.name === 'execute_tool echo')!
    expect(outer.resource['service.name']).toBe('client')
    expect(inner.resource['service.name']).toBe('server')
    expect(inner.traceId).toBe(outer.traceId)
    expect(inner.parentSpanId).toBe(outer.spanId)
  })
})
