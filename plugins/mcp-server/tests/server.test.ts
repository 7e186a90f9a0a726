import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { createTestContext, type TestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { mcpOutputSchema, structuredContent } from '../src/schema.js'
import { fixtureTools } from './fixtures/tools.mjs'
import { REPO_ROOT, serveCommand, until } from './helpers.js'

const cleanups: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** The same fixture tools in a local context: the reference for canonical values. */
async function localTools(): Promise<TestContext> {
  const ctx = await createTestContext({ print: false })
  await ctx.plugin(fixtureTools)
  return ctx
}

async function connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<{ client: Client; changes: () => number }> {
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' })
  let changes = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
  await client.connect(transport)
  cleanups.push(() => client.close())
  return { client, changes: () => changes }
}

/** Behaviour every transport must show to the SDK's own Client. */
async function checkServer(client: Client, changes: () => number): Promise<void> {
  const local = await localTools()
  const { tools } = await client.listTools()
  expect(tools.map((tool) => tool.name)).toEqual(local.tools.list().map((tool) => tool.name))
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]))
  expect(byName.add!.inputSchema).toEqual(local.tools.get('add')!.parameters)
  expect(byName.add!.outputSchema).toEqual({ type: 'object', properties: { result: { type: 'number' } }, required: ['result'], additionalProperties: false })
  expect(byName.profile!.outputSchema).toEqual(local.tools.get('profile')!.output.schema)
  expect(byName.letters!.outputSchema).toMatchObject({ properties: { result: { items: { $ref: '#/properties/result/$defs/letter' } } } })

  // callTool validates structuredContent against the advertised outputSchema itself.
  for (const [name, args] of [
    ['add', { a: 1, b: 2 }],
    ['profile', { name: 'Ada' }],
    ['letters', { word: 'abc' }],
    ['picture', {}],
  ] as const) {
    const expected = await local.tools.execute({ name, arguments: args })
    if (expected.isError) throw new Error(expected.error.message)
    const result = await client.callTool({ name, arguments: args })
    const wrapped = local.tools.get(name)!.output.schema.type === 'object' ? expected.value : { result: expected.value }
    expect(result.structuredContent, name).toEqual(wrapped)
    expect(result.isError ?? false).toBe(false)
    if (name !== 'picture') expect(result.content, name).toEqual(expected.content)
  }
  const picture = await client.callTool({ name: 'picture', arguments: {} })
  expect(picture.content).toEqual([
    { type: 'image', data: expect.any(String), mimeType: 'image/png' },
    { type: 'resource_link', uri: 'file:///pixel.png', name: 'file:///pixel.png', mimeType: 'image/png' },
  ])

  const boom = await client.callTool({ name: 'boom', arguments: {} })
  expect(boom).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: kaboom' }] })
  expect(boom.structuredContent).toBeUndefined()
  const denied = await client.callTool({ name: 'secret', arguments: {} })
  expect(denied).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: secret is off limits' }] })
  const badArgs = await client.callTool({ name: 'add', arguments: { a: 'one' } })
  expect(badArgs.isError).toBe(true)
  const unknown = await client.callTool({ name: 'nope', arguments: {} })
  expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('unknown tool "nope"') }] })

  // Registering a tool announces tools/list_changed; the new list has it.
  const before = changes()
  await client.callTool({ name: 'mount', arguments: {} })
  await until(() => changes() > before, 5_000, 'tools/list_changed')
  expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late')
  expect((await client.callTool({ name: 'late', arguments: {} })).structuredContent).toEqual({ result: 'late!' })
  const mid = changes()
  await client.callTool({ name: 'unmount', arguments: {} })
  await until(() => changes() > mid, 5_000, 'tools/list_changed after unmount')
  expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('late')
}

describe('mcp-server', () => {
  it('serves ctx.tools over stdio to the SDK Client (child process): schemas, structuredContent, errors, policy, list changes', async () => {
    const command = serveCommand()
    const transport = new StdioClientTransport({ command: command.command, args: command.args, cwd: command.cwd, env: command.env })
    const { client, changes } = await connect(transport)
    await expect(checkServer(client, changes)).resolves.toBeUndefined()
  })

  it('passes MCP cancellation to the tool body through the pipeline signal', async () => {
    const command = serveCommand()
    const { client } = await connect(new StdioClientTransport({ command: command.command, args: command.args, cwd: command.cwd, env: command.env }))
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    await expect(client.callTool({ name: 'wait', arguments: { ms: 10_000 } }, undefined, { signal: controller.signal })).rejects.toThrow()
    await until(() => command.events().some((line) => line.startsWith('aborted mcp_')), 5_000, 'the body to see the abort')
  })

  it('serves Streamable HTTP on 127.0.0.1 from the plugin, and unloading closes the port', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(fixtureTools)
    const fiber = await ctx.plugin(plugin, { transport: 'http' })
    const url = /listening on (\S+)/.exec(ctx.logs.map((record) => record.text).join('\n'))![1]!
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const { client, changes } = await connect(new StreamableHTTPClientTransport(new URL(url)))
    await expect(checkServer(client, changes)).resolves.toBeUndefined()
    await client.close()
    await fiber.dispose()
    await expect(fetch(url, { method: 'POST' })).rejects.toThrow()
  })

  it('refuses foreign Host headers on a loopback endpoint and requests without a session', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(fixtureTools)
    const fiber = await ctx.plugin(plugin, { transport: 'http' })
    cleanups.push(() => fiber.dispose())
    const url = new URL(/listening on (\S+)/.exec(ctx.logs.map((record) => record.text).join('\n'))![1]!)
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    const status = (host: string, body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: url.port,
            path: '/mcp',
            method: 'POST',
            headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          },
          (res) => {
            res.resume()
            resolve(res.statusCode!)
          },
        )
        req.on('error', reject)
        req.end(body)
      })
    expect(await status('evil.example:80', initialize)).toBe(403)
    expect(await status(`127.0.0.1:${url.port}`, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }))).toBe(400)
    expect(await status(`127.0.0.1:${url.port}`, initialize)).toBe(200)
    for (const host of ['[::1]', `[::1]:${url.port}`, 'localhost', '127.0.0.1']) expect([host, await status(host, initialize)]).toEqual([host, 200])
    expect(await status('[::2]', initialize)).toBe(403)
  })

  // `cordage mcp serve` runs from the built CLI (`pnpm build` first, like the CLI's own process tests).
  const bin = join(REPO_ROOT, 'packages/cli/dist/bin.js')
  function cordageProject(): string {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`)
    const dir = mkdtempSync(join(tmpdir(), 'mcp-serve-'))
    writeFileSync(join(dir, 'cordage.yml'), `plugins:\n  - ${JSON.stringify(join(import.meta.dirname, 'fixtures', 'cordage-plugin.mjs'))}\n`)
    return dir
  }

  it('the SDK Client calling `cordage mcp serve` over stdio sees outputSchema and structuredContent matching the canonical values', async () => {
    const cwd = cordageProject()
    const { client, changes } = await connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', 'serve'], cwd, stderr: 'pipe' }))
    await expect(checkServer(client, changes)).resolves.toBeUndefined()
  })

  it('`cordage mcp serve` answers a stdio message over 10 MiB with a JSON-RPC error and keeps serving', async () => {
    const cwd = cordageProject()
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', 'serve'], cwd, stderr: 'pipe' })
    let stderr = ''
    transport.stderr!.on('data', (chunk) => (stderr += chunk))
    const { client } = await connect(transport)
    const pid = transport.pid!
    const huge = client.callTool({ name: 'profile', arguments: { name: 'x'.repeat(11 * 1024 * 1024) } })
    await expect(huge).rejects.toMatchObject({ code: -32600, message: expect.stringContaining('MCP_FRAME_TOO_LARGE') })
    const result = await client.callTool({ name: 'profile', arguments: { name: 'Ada' } })
    expect(result.structuredContent).toEqual({ name: 'Ada', tags: ['kind', 'curious'] })
    expect(() => process.kill(pid, 0)).not.toThrow()
    expect(stderr).toMatch(/MCP_FRAME_TOO_LARGE: refused a \d+-byte message/)
  })

  it('`cordage mcp serve --http 0` serves Streamable HTTP on 127.0.0.1, prints the URL and exits 0 on SIGTERM', async () => {
    const cwd = cordageProject()
    const child = spawn(process.execPath, [bin, 'mcp', 'serve', '--http', '0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    cleanups.push(async () => void child.kill('SIGKILL'))
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = ''
      child.stderr!.on('data', (chunk) => {
        stderr += chunk
        const match = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)
        if (match) resolve(match[1]!)
      })
      child.once('exit', (code) => reject(new Error(`cordage mcp serve exited with ${code}: ${stderr}`)))
    })
    const { client } = await connect(new StreamableHTTPClientTransport(new URL(url)))
    const result = await client.callTool({ name: 'profile', arguments: { name: 'Ada' } })
    expect(result.structuredContent).toEqual({ name: 'Ada', tags: ['kind', 'curious'] })
    await client.close()
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })

  it('wraps non-object output schemas as { result } and rebases local refs', () => {
    const schema = { type: 'array' as const, items: { $ref: '#/$defs/x' }, $defs: { x: { type: 'string' as const } } }
    expect(mcpOutputSchema(schema)).toEqual({
      type: 'object',
      properties: { result: { type: 'array', items: { $ref: '#/properties/result/$defs/x' }, $defs: { x: { type: 'string' } } } },
      required: ['result'],
      additionalProperties: false,
    })
    const objectRoot = { type: 'object' as const, properties: {} }
    expect(mcpOutputSchema(objectRoot)).toBe(objectRoot)
    expect(structuredContent(schema, ['a'])).toEqual({ result: ['a'] })
  })

  it('rejects an invalid config at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(plugin, { transport: 'http', port: 70_000 } as any)).rejects.toThrow(/port/)
    await expect(ctx.plugin(plugin, { transport: 'carrier-pigeon' } as any)).rejects.toThrow(/transport/)
  })
})
