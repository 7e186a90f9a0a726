import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { processAlive } from '@cordage/testing'
import { codeOf, fakeServer, languageServers, loadLsp, project, textOf, valueOf } from './helpers.js'

const fake = fakeServer
const files = { 'a.txt': 'one\ntwo\nthree\n' }
const hover = { operation: 'hover', path: 'a.txt', line: 1, character: 1 }

/** Live children of this process running the fake server. */
function fakeServers(): number[] {
  return languageServers('fake-server.mjs')
}

describe('lsp failure handling', { timeout: 60_000 }, () => {
  it('times out a request the server never answers, and the server keeps serving', async () => {
    const { call, fiber } = await loadLsp(await project(files), { servers: [fake('stuck')], requestTimeoutMs: 300 })
    const result = await call(hover)
    expect(codeOf(result)).toBe('LSP_TIMEOUT')
    expect(textOf(result)).toContain('did not answer textDocument/hover within 300 ms')
    expect(valueOf(await call({ operation: 'symbols', path: 'a.txt' })).symbols).toHaveLength(150)
    await fiber.dispose()
  })

  it('cancels the request when the caller aborts', async () => {
    const root = await project(files)
    const received = join(root, 'hovers.log')
    const { call, fiber } = await loadLsp(root, { servers: [fake('stuck', { FAKE_HOVER_LOG: received })] })
    const controller = new AbortController()
    const pending = call(hover, controller.signal)
    // Aborted once the server has the request.
    await expect.poll(() => existsSync(received), { timeout: 20_000, interval: 10 }).toBe(true)
    controller.abort()
    expect(codeOf(await pending)).toBe('ABORTED')
    expect(valueOf(await call({ operation: 'symbols', path: 'a.txt' })).symbols).toHaveLength(150)
    await fiber.dispose()
  })

  it('unloading ends what the server left behind, even a daemon that left its session and lost its parent', async () => {
    const root = await project(files)
    const pidFile = join(root, 'daemon.pid')
    const { call, fiber } = await loadLsp(root, { servers: [fake('daemon', { FAKE_DAEMON_PID: pidFile })] })
    expect(valueOf(await call({ operation: 'symbols', path: 'a.txt' })).symbols).toHaveLength(150)
    await expect.poll(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', { timeout: 20_000 }).toBe(true)
    const daemon = Number(readFileSync(pidFile, 'utf8'))
    expect(processAlive(daemon)).toBe(true)
    await fiber.dispose()
    // The daemon is gone once dispose has settled (a process-group kill never reached it).
    expect(processAlive(daemon)).toBe(false)
    expect(fakeServers()).toEqual([])
  })

  it('retries once on a fresh process when the server dies mid-request, then reports the crash', async () => {
    const { call, fiber } = await loadLsp(await project(files), { servers: [fake('crash')] })
    const result = await call(hover)
    expect(codeOf(result)).toBe('LSP_SERVER_CRASHED')
    expect(textOf(result)).toContain('the fake-crash language server stopped (exit code 3); the next call starts it again')
    // The next call works on a new process.
    expect(valueOf(await call({ operation: 'symbols', path: 'a.txt' })).symbols.length).toBe(150)
    await fiber.dispose()
  })

  it('refuses operations the server does not support', async () => {
    const { call, fiber } = await loadLsp(await project(files), { servers: [fake('bare')] })
    const result = await call(hover)
    expect(codeOf(result)).toBe('LSP_UNSUPPORTED_OPERATION')
    expect(textOf(result)).toBe('Error: the fake-bare language server does not support hover')
    await fiber.dispose()
    // A server with definitions but no implementationProvider.
    const partial = await loadLsp(await project(files), { servers: [fake('symbols')] })
    const implementation = await partial.call({ ...hover, operation: 'implementation' })
    expect(textOf(implementation)).toBe('Error: the fake-symbols language server does not support implementation')
    await partial.fiber.dispose()
  })

  it('keeps credential-looking variables out of the server environment', async () => {
    process.env.FAKE_API_KEY = 'secret'
    process.env.FAKE_PLAIN = 'fine'
    try {
      const { call, fiber } = await loadLsp(await project(files), { servers: [fake('env', { FAKE_EXTRA: 'configured' })] })
      expect(textOf(await call(hover))).toBe('FAKE_EXTRA,FAKE_PLAIN')
      await fiber.dispose()
    } finally {
      delete process.env.FAKE_API_KEY
      delete process.env.FAKE_PLAIN
    }
  })

  it('keeps every location in the value, renders the first page, and shows outside and non-file URIs as such', async () => {
    const { call, fiber } = await loadLsp(await project(files), { servers: [fake('symbols')] })
    const result = await call({ operation: 'definition', path: 'a.txt', line: 1, character: 1 })
    expect(valueOf(result).locations).toHaveLength(130)
    const lines = textOf(result).split('\n')
    expect(lines).toHaveLength(101)
    expect(lines[0]).toBe('a.txt:1:1')
    expect(lines[100]).toBe('… 30 more locations omitted (limit 100).')
    const all = await loadLsp(await project(files), { servers: [fake('symbols')], pageSize: 200, maxResults: 129 })
    const capped = await all.call({ operation: 'definition', path: 'a.txt', line: 1, character: 1 })
    expect(valueOf(capped)).toMatchObject({ truncated: true })
    expect(textOf(capped).split('\n').slice(-2)).toEqual([
      '/usr/lib/outside.d.ts:10:1',
      '(The server returned more locations than the plugin keeps; narrow the query.)',
    ])
    await all.fiber.dispose()
    await fiber.dispose()
  })

  it('starts servers lazily and stops them on unload, even one still starting, leaving no exit hook', async () => {
    const hooks = process.listenerCount('exit')
    const { call, fiber } = await loadLsp(await project(files), { servers: [fake('stuck')] })
    expect(fakeServers()).toEqual([])
    expect(process.listenerCount('exit')).toBe(hooks + 1)
    const pending = call({ operation: 'symbols', path: 'a.txt' })
    await fiber.dispose()
    await pending
    await expect.poll(() => fakeServers(), { timeout: 5000 }).toEqual([])
    expect(process.listenerCount('exit')).toBe(hooks)
  })

  it.each([
    [{ servers: [{ name: 'x', command: 'x', globs: [], languageId: 'x' }] }, 'lsp: servers[0].globs: is empty'],
    [{ servers: [{ name: 'x', command: ' ', globs: ['*'], languageId: 'x' }] }, 'lsp: servers[0].command: is empty'],
    [
      {
        servers: [
          { name: 'x', command: 'a', globs: ['*'], languageId: 'x' },
          { name: 'x', command: 'b', globs: ['*'], languageId: 'x' },
        ],
      },
      'lsp: servers[1].name: "x" is used twice',
    ],
    [{ root: '/no/such/dir' }, 'lsp: root: "/no/such/dir" does not exist'],
  ])('rejects a bad config at load (%#)', async (config, message) => {
    const root = await project(files)
    await expect(loadLsp(root, config as any, { print: false })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining(message) })
  })

  it('declares its path argument for path-aware policy', async () => {
    const { ctx, fiber } = await loadLsp(await project(files), { servers: [fake('bare')] })
    expect(ctx.tools.get('lsp')!.paths).toEqual([{ pointer: '/path', access: 'read' }])
    await fiber.dispose()
  })
})
