import { join, resolve } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestContext } from '@cordage/testing'
import * as plugin from '../src/index.js'
import { alive, connectedPids, httpFixture, until } from './helpers.js'

// The Cordage MCP server fixture (registry + tools + mcp-server) from the sibling plugin's tests.
const SERVER_FIXTURES = resolve(import.meta.dirname, '../../mcp-server/tests/fixtures')
const REPO_ROOT = resolve(import.meta.dirname, '../../..')
const { fixtureTools } = await import(join(SERVER_FIXTURES, 'tools.mjs'))

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe('round trip: mcp-client against a Cordage mcp-server child process', () => {
  it('exposes the same tools with equal values', async () => {
    const local = await createTestContext({ print: false })
    await local.plugin(fixtureTools)
    const ctx = await createTestContext({ print: false })
    const fiber = await ctx.plugin(plugin, {
      name: 'cordage',
      transport: 'stdio',
      command: process.execPath,
      args: ['--conditions=cordage-source', '--import', 'tsx', join(SERVER_FIXTURES, 'serve.mjs')],
      cwd: REPO_ROOT,
    })
    cleanups.push(() => fiber.dispose())
    const localTools = local.tools.list()
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual(localTools.map((tool) => `mcp__cordage__${tool.name}`))
    for (const tool of localTools) {
      const bridged = ctx.tools.get(`mcp__cordage__${tool.name}`)!
      expect(bridged.description).toBe(tool.description)
      expect(bridged.parameters).toEqual(tool.parameters)
    }
    const calls = [
      ['add', { a: 2, b: 40 }],
      ['profile', { name: 'Ada' }],
      ['letters', { word: 'hey' }],
      ['boom', {}],
      ['secret', {}],
    ] as const
    for (const [name, args] of calls) {
      const expected = await local.tools.execute({ name, arguments: args })
      const actual = await ctx.tools.execute({ name: `mcp__cordage__${name}`, arguments: args })
      expect(actual.isError, name).toBe(expected.isError)
      if (expected.isError || actual.isError) {
        // Failures cross MCP as isError with the rendered text, and come back with the same message and content.
        expect(actual.content, name).toEqual(expected.content)
        expect(actual.isError && actual.error.message, name).toBe(expected.isError && expected.error.message)
        continue
      }
      const wrapped = local.tools.get(name)!.output.schema.type === 'object' ? expected.value : { result: expected.value }
      expect(actual.value, name).toEqual({ content: expected.content, structuredContent: wrapped })
      expect(actual.content, name).toEqual(expected.content)
    }
    const [pid] = connectedPids(ctx)
    await fiber.dispose()
    await until(() => !alive(pid!), 5_000, 'the server child to exit')
  })
})

describe('mcp-client over Streamable HTTP on 127.0.0.1', () => {
  it('bridges tools, follows list changes, and reconnects after the server restarts', async () => {
    const first = await httpFixture()
    cleanups.push(() => first.child.kill())
    const ctx = await createTestContext({ print: false })
    const fiber = await ctx.plugin(plugin, { name: 'web', transport: 'http', url: first.url, reconnect: { initialDelayMs: 50, maxDelayMs: 200 } })
    cleanups.push(() => fiber.dispose())
    const echo = await ctx.tools.execute({ name: 'mcp__web__echo', arguments: { text: 'over http' } })
    expect(echo.isError === false && echo.value).toEqual({ content: [{ type: 'text', text: 'over http' }], structuredContent: { text: 'over http' } })
    await ctx.tools.execute({ name: 'mcp__web__add_tool', arguments: {} })
    await until(() => ctx.tools.get('mcp__web__extra') !== undefined, 5_000, 'the added tool over HTTP')

    // The server goes away: its broken event stream is noticed without a call (a ping finds nobody), and the
    // tools are unregistered until it is back; a call meanwhile fails clearly.
    first.child.kill()
    await new Promise((resolve) => first.child.once('exit', resolve))
    await until(() => ctx.tools.get('mcp__web__echo') === undefined, 5_000, 'the tools to go with the server')
    const down = await ctx.tools.execute({ name: 'mcp__web__echo', arguments: { text: 'anyone?' } })
    expect(down.isError && down.error.info?.code).toBe('UNKNOWN_TOOL')
    const port = Number(new URL(first.url).port)
    const second = await httpFixture(port)
    cleanups.push(() => second.child.kill())
    await until(() => ctx.tools.get('mcp__web__echo') !== undefined, 10_000, 'reconnection over HTTP')
    const back = await ctx.tools.execute({ name: 'mcp__web__echo', arguments: { text: 'back' } })
    expect(back.isError).toBe(false)
  })
})
