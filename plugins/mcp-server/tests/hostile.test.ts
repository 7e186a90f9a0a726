import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { context, propagation, trace } from '@opentelemetry/api'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { defineTool } from '@cordage/core'
import { createTestContext, type TestContext } from '@cordage/testing'
import * as McpClient from '@cordage/plugin-mcp-client'
// The loopback OTLP receiver and the SDK setup (W3C trace-context and baggage propagators) of the telemetry plugin's tests.
import { startOtlpReceiver } from '../../otel/tests/receiver.js'
import { startSdk } from '../../otel/tests/sdk.js'
import * as plugin from '../src/index.js'
import { fixtureTools } from './fixtures/tools.mjs'
import { REPO_ROOT, until } from './helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The plugin serving the fixture tools over HTTP with `config`; resolves to its URL. */
async function serveHttp(config: Record<string, unknown> = {}): Promise<{ ctx: TestContext; url: URL }> {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(fixtureTools)
  const fiber = await ctx.plugin(plugin, { transport: 'http', ...config })
  cleanups.push(() => fiber.dispose())
  return { ctx, url: new URL(/listening on (\S+)/.exec(ctx.logs.map((record) => record.text).join('\n'))![1]!) }
}

interface Answer {
  status: number
  session: string | undefined
  /** The JSON-RPC message of the answer (from a JSON body or the first SSE `data:` line). */
  message: { id?: unknown; result?: unknown; error?: { code: number; message: string } } | undefined
}

/** One raw HTTP request to the endpoint; `stream` leaves a GET event stream open until `close()`. */
function send(url: URL, options: { method?: string; headers?: Record<string, string>; body?: unknown }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: options.method ?? 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers },
      },
      (res) => {
        let text = ''
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => {
          const json = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1]
          resolve({ status: res.statusCode!, session: res.headers['mcp-session-id'] as string | undefined, message: json ? JSON.parse(json) : undefined })
        })
      },
    )
    req.on('error', reject)
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body))
  })
}

const initialize = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
})

/** Initializes a session by hand (no GET event stream, unlike the SDK client): returns its id. */
async function openSession(url: URL, headers: Record<string, string> = {}): Promise<string> {
  const answer = await send(url, { body: initialize(1), headers })
  if (answer.status !== 200 || !answer.session) throw new Error(`initialize failed: ${answer.status} ${JSON.stringify(answer.message)}`)
  await send(url, {
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    headers: { 'mcp-session-id': answer.session, 'mcp-protocol-version': '2025-06-18' },
  })
  return answer.session
}

const listTools = (url: URL, session: string) =>
  send(url, { body: { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers: { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } })

describe('HTTP sessions are capped', () => {
  it('refuses an initialize past maxSessions with 503 MCP_SESSION_LIMIT, and a closed session frees its slot', async () => {
    const { url } = await serveHttp({ maxSessions: 2 })
    const first = await openSession(url)
    await openSession(url)
    const refused = await send(url, { body: initialize(7) })
    expect(refused.status).toBe(503)
    expect(refused.message).toMatchObject({
      id: 7,
      error: { code: -32000, message: expect.stringMatching(/^MCP_SESSION_LIMIT: this server already has 2 MCP sessions/) },
    })
    const ended = await send(url, { method: 'DELETE', headers: { 'mcp-session-id': first, 'mcp-protocol-version': '2025-06-18' } })
    expect(ended.status).toBe(200)
    await expect(openSession(url)).resolves.toEqual(expect.any(String))
  })

  it('a flood of concurrent initializes opens exactly maxSessions; refused Host or Origin requests hold no slot', async () => {
    const { url } = await serveHttp({ maxSessions: 5 })
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await send(url, { body: initialize(attempt), headers: { host: 'evil.example' } })).status).toBe(403)
      expect((await send(url, { body: initialize(attempt), headers: { origin: 'http://evil.example' } })).status).toBe(403)
    }
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => send(url, { body: initialize(index) })))
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses.filter((status) => status === 200)).toHaveLength(5)
    expect(statuses.filter((status) => status === 503)).toHaveLength(35)
  })
})

describe('idle HTTP sessions expire', () => {
  it('closes a session with no request open after sessionIdleMs (404 afterwards, its slot free), not one whose client listens', async () => {
    // Idle time well above the gap between one client's first requests, even on a loaded machine.
    const { url } = await serveHttp({ maxSessions: 2, sessionIdleMs: 1_000 })
    // The SDK client holds its GET event stream open: it listens, so it is not idle.
    const listener = new Client({ name: 'listener', version: '1' })
    await listener.connect(new StreamableHTTPClientTransport(url))
    cleanups.push(() => listener.close())
    const quiet = await openSession(url)
    expect((await listTools(url, quiet)).status).toBe(200)
    // Asking the quiet session itself would keep it alive: watch for its slot coming free instead.
    let next: string | undefined
    await until(async () => (next = await openSession(url).catch(() => undefined)) !== undefined, 20_000, 'the idle session to expire')
    const gone = await listTools(url, quiet)
    expect(gone.status).toBe(404)
    expect(gone.message?.error?.message).toContain('unknown MCP session (it ended or expired)')
    expect((await listTools(url, next!)).status).toBe(200)
    // The listener made no request for longer than the quiet session and is still served.
    expect((await listener.listTools()).tools.length).toBeGreaterThan(0)
  })
})

describe('Origin is checked beside Host', () => {
  it('refuses a request carrying a foreign Origin, or Origin null, even with a loopback Host and a live session', async () => {
    const { url } = await serveHttp()
    for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${Number(url.port) + 1}`]) {
      const answer = await send(url, { body: initialize(1), headers: { origin } })
      expect([origin, answer.status]).toEqual([origin, 403])
      expect(answer.message?.error?.message).toMatch(/^MCP_ORIGIN_REFUSED: Origin ".*" is not allowed/)
    }
    const session = await openSession(url)
    const get = await send(url, { method: 'GET', headers: { 'mcp-session-id': session, origin: 'http://evil.example' } })
    expect(get.status).toBe(403)
  })

  it('lets the configured origins and Host names through, and clients that send no Origin', async () => {
    const { url } = await serveHttp({ allowedOrigins: ['http://localhost:5173'], allowedHosts: ['mcp.internal'] })
    expect((await send(url, { body: initialize(1), headers: { origin: 'HTTP://LOCALHOST:5173' } })).status).toBe(200)
    expect((await send(url, { body: initialize(1), headers: { origin: 'http://localhost:5174' } })).status).toBe(403)
    expect((await send(url, { body: initialize(1), headers: { host: 'mcp.internal' } })).status).toBe(200)
    expect((await send(url, { body: initialize(1), headers: { host: 'other.internal' } })).status).toBe(403)
    expect((await send(url, { body: initialize(1) })).status).toBe(200)
  })

  it('rejects mistyped or malformed settings at load, naming the field', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(plugin, { transport: 'http', allowedOrigin: ['http://a.example'] } as never)).rejects.toThrow(/allowedOrigin.*allowedOrigins/s)
    await expect(ctx.plugin(plugin, { transport: 'http', allowedOrigins: ['localhost:3000'] })).rejects.toThrow(/allowedOrigins.*scheme:\/\/host/s)
    await expect(ctx.plugin(plugin, { transport: 'http', maxSessions: 0 })).rejects.toThrow(/maxSessions/)
  })
})

describe('a bridged MCP tool re-served', () => {
  it("returns the original server's structuredContent and outputSchema, not the bridge's wrapper", async () => {
    const ctx = await createTestContext({ print: false })
    const server = join(REPO_ROOT, 'plugins/mcp-client/tests/fixtures/server.mjs')
    const bridge = await ctx.plugin(McpClient, { name: 'up', transport: 'stdio', command: process.execPath, args: [server], cwd: REPO_ROOT })
    cleanups.push(() => bridge.dispose())
    const fiber = await ctx.plugin(plugin, { transport: 'http' })
    cleanups.push(() => fiber.dispose())
    const url = new URL(/listening on (\S+)/.exec(ctx.logs.map((record) => record.text).join('\n'))![1]!)
    const client = new Client({ name: 'sdk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(url))
    cleanups.push(() => client.close())

    const listed = Object.fromEntries((await client.listTools()).tools.map((tool) => [tool.name, tool]))
    expect(listed.mcp__up__weather!.outputSchema).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
      additionalProperties: false,
    })
    expect(listed.mcp__up__echo!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true })
    // No outputSchema upstream (media), or one the bridge cannot enforce (odd_schema): none is advertised.
    expect(listed.mcp__up__media!.outputSchema).toBeUndefined()
    expect(listed.mcp__up__odd_schema!.outputSchema).toBeUndefined()

    // The SDK client validates structuredContent against the advertised outputSchema itself.
    const weather = await client.callTool({ name: 'mcp__up__weather', arguments: { city: 'Oslo' } })
    expect(weather.structuredContent).toEqual({ city: 'Oslo', celsius: 21.5 })
    expect(weather.content).toEqual([{ type: 'text', text: '{"city":"Oslo","celsius":21.5}' }])
    const odd = await client.callTool({ name: 'mcp__up__odd_schema', arguments: { n: 2 } })
    expect(odd.structuredContent).toEqual({ n: 2, extra: true })
    const media = await client.callTool({ name: 'mcp__up__media', arguments: {} })
    expect(media.structuredContent).toBeUndefined()
    expect(media.isError ?? false).toBe(false)
    const failed = await client.callTool({ name: 'mcp__up__fail', arguments: {} })
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('the disk is on fire') }] })
    // Native tools keep their own wrapping.
    expect((await client.callTool({ name: 'mcp__up__echo', arguments: { text: 'hi' } })).structuredContent).toEqual({ text: 'hi' })
  })
})

describe('one stdio server per process', () => {
  // The built CLI, as users run it (`pnpm build` first).
  const bin = join(REPO_ROOT, 'packages/cli/dist/bin.js')

  it.each([
    ['with its config', '- mcp-server: { serverName: configured }'],
    ['by name alone', '- mcp-server'],
  ])('`cordage mcp serve` with mcp-server also in cordage.yml (%s) answers each request once and says why', async (_form, entry) => {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
    const dir = mkdtempSync(join(tmpdir(), 'mcp-serve-twice-'))
    const tools = JSON.stringify(join(import.meta.dirname, 'fixtures', 'cordage-plugin.mjs'))
    writeFileSync(join(dir, 'cordage.yml'), `plugins:\n  - ${tools}\n  ${entry}\n`)
    const child = spawn(process.execPath, [bin, 'mcp', 'serve'], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] })
    cleanups.push(async () => void child.kill('SIGKILL'))
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (chunk) => (stdout += chunk))
    child.stderr!.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    const write = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`)
    write(initialize(1))
    await until(() => stdout.includes('"id":1'), 20_000, 'the initialize answer')
    write({ jsonrpc: '2.0', method: 'notifications/initialized' })
    write({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    write({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } })
    await until(() => stdout.includes('"id":3'), 20_000, 'the tools/call answer')
    // Every answer there is gets written before the process exits.
    child.stdin!.end()
    expect(await exited).toBe(0)
    const ids = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { id?: number }).id)
    expect(ids).toEqual([1, 2, 3])
    expect(stderr).toContain('cordage.yml already serves MCP on stdio (plugin mcp-server); serving through that one server only')
  })
})

describe("a client's trace context in _meta", () => {
  it('continues the W3C trace context of the call, and no baggage the client sends reaches the tools', async () => {
    const receiver = await startOtlpReceiver()
    cleanups.push(() => receiver.close())
    const sdk = startSdk(receiver.url, 'json')
    cleanups.push(() => sdk.shutdown())
    const { ctx, url } = await serveHttp()
    // What instrumentation inside a tool sees: the active trace and baggage (forwarded to whatever it calls).
    ctx.tools.register(
      defineTool({
        name: 'context',
        description: 'Reports the active trace context.',
        parameters: Schema.object({}),
        output: {
          schema: Schema.object({ trace: Schema.string(), baggage: Schema.array(Schema.string()) }),
          render: (_args, value) => [{ type: 'text', text: JSON.stringify(value) }],
        },
        execute: () => ({
          trace: trace.getSpanContext(context.active())?.traceId ?? '',
          baggage: (propagation.getActiveBaggage()?.getAllEntries() ?? []).map(([key, entry]) => `${key}=${entry.value}`),
        }),
      }),
    )
    const client = new Client({ name: 'sdk', version: '1' })
    await client.connect(new StreamableHTTPClientTransport(url))
    cleanups.push(() => client.close())
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const result = await client.callTool({
      name: 'context',
      arguments: {},
      _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, baggage: 'tenant=other-customer,user.role=admin' },
    })
    expect(result.structuredContent).toEqual({ trace: traceId, baggage: [] })
  })
})
