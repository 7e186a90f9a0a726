import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import * as CodeMode from '@cordage/plugin-code-mode'
import * as McpClient from '@cordage/plugin-mcp-client'
import { code, setupPaths, workspace } from './path-helpers.js'
import { textOf } from './helpers.js'

const { root } = workspace()
const deny = [{ path: 'secret.txt', action: 'deny' as const, reason: 'secret.txt is off limits' }]
const FS_SERVER = fileURLToPath(new URL('./fixtures/fs-server.mjs', import.meta.url))

describe('path rules reach nested and bridged calls', () => {
  it('a Code Mode program cannot read the secret through any spelling', async () => {
    const { ctx } = await setupPaths(root, deny)
    await ctx.plugin(CodeMode, {})
    const program = `
      const outcomes = []
      for (const path of ['./secret.txt', 'sub/../secret.txt', 'alias.txt', 'public.txt']) {
        try { outcomes.push((await tools.read({ path })).text) } catch (error) { outcomes.push(error.message) }
      }
      try { outcomes.push((await tools.grep({ pattern: 'SECRET' })).matches.join()) } catch (error) { outcomes.push(error.message) }
      return outcomes`
    const result = await ctx.tools.execute({ name: 'run_code', arguments: { code: program } })
    expect(result.isError).toBe(false)
    const outcomes = result.isError ? [] : (result.value as { result: string[] }).result
    expect(outcomes).toHaveLength(5)
    expect(outcomes.filter((outcome) => outcome.includes('secret.txt is off limits'))).toHaveLength(4)
    expect(outcomes[3]).toBe('hello\n')
    expect(JSON.stringify(result)).not.toContain('TOP-SECRET')
  })

  it('a bridged MCP tool whose argument is mapped to a path is denied like a native one', async () => {
    const { ctx } = await setupPaths(root, deny)
    const fiber = await ctx.plugin(McpClient, {
      name: 'fs',
      transport: 'stdio',
      command: process.execPath,
      args: [FS_SERVER],
      cwd: root,
      paths: { read_file: [{ pointer: '/path', access: 'read' }] },
    })
    try {
      expect(ctx.tools.get('mcp__fs__read_file')?.paths).toEqual([{ pointer: '/path', access: 'read' }])
      for (const path of ['secret.txt', './secret.txt', 'sub/../secret.txt', `${root}/secret.txt`, 'alias.txt']) {
        const result = await ctx.tools.execute({ name: 'mcp__fs__read_file', arguments: { path } })
        expect([path, code(result)]).toEqual([path, 'DENIED'])
        expect(textOf(result.content)).not.toContain('TOP-SECRET')
      }
      const allowed = await ctx.tools.execute({ name: 'mcp__fs__read_file', arguments: { path: 'public.txt' } })
      expect(textOf(allowed.content)).toBe('hello\n')
    } finally {
      await fiber.dispose()
    }
  })

  it('without the mapping the bridged tool declares no paths (the README says to map it)', async () => {
    const { ctx } = await setupPaths(root, deny)
    const fiber = await ctx.plugin(McpClient, { name: 'fs', transport: 'stdio', command: process.execPath, args: [FS_SERVER], cwd: root })
    try {
      expect(ctx.tools.get('mcp__fs__read_file')?.paths).toBeUndefined()
    } finally {
      await fiber.dispose()
    }
  })
})
