import { spawn } from 'node:child_process'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { bin, echoPlugin, project } from './helpers.js'

// A second local tool plugin for add/remove.
const shoutPlugin = `
export const name = 'shout'
export const inject = ['tools']
export function apply(ctx) {
  ctx.tools.register({
    name: 'shout', description: 'Upper-cases text.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    output: { schema: { type: 'string' }, render: (args, value) => [{ type: 'text', text: value }] },
    execute: (args) => args.text.toUpperCase(),
  })
}
`

/** Resolves once `predicate` holds, polling; fails with `what` after `ms`. */
async function until(predicate: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('cordage mcp serve --watch', { timeout: 90_000 }, () => {
  const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs: { prefix: one }\n', 'echo.mjs': echoPlugin, 'shout.mjs': shoutPlugin })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', 'serve', '--watch'],
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1' } as Record<string, string>,
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr!.on('data', (chunk) => (stderr += chunk))
  const client = new Client({ name: 'watch-test', version: '1.0.0' })
  let changes = 0
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++)
  afterAll(() => client.close())

  const edit = (yml: string) => writeFileSync(join(dir, 'cordage.yml'), yml)
  const toolNames = async () => (await client.listTools()).tools.map((tool) => tool.name).sort()
  const echo = async (text: string) => ((await client.callTool({ name: 'echo', arguments: { text } })).content as Array<{ text: string }>)[0].text
  const reloads = () => stderr.split('\n').filter((line) => line.startsWith('cordage.yml reloaded') || line.startsWith('cordage.yml: reload rejected')).length

  it('applies edits to the running server in one session: changed config, added and removed plugins, a rejected edit', async () => {
    await client.connect(transport)
    const pid = transport.pid
    expect(await toolNames()).toEqual(['echo'])
    expect(await echo('hi')).toBe('one: hi')

    edit('plugins:\n  ./echo.mjs: { prefix: two }\n  ./shout.mjs: {}\n')
    await until(() => reloads() === 1 && changes > 0, 'the first reload and tools/list_changed')
    expect(stderr).toContain('cordage.yml reloaded: loaded ./shout.mjs; reloaded ./echo.mjs (2 tools)')
    expect(await toolNames()).toEqual(['echo', 'shout'])
    expect(await echo('hi')).toBe('two: hi')

    const before = changes
    edit('plugins:\n  ./echo.mjs: { prefix: 3 }\n  ./shout.mjs: {}\n')
    await until(() => reloads() === 2, 'the rejected reload')
    expect(stderr).toContain(
      'cordage.yml: reload rejected, the running plugins are unchanged:\ncordage.yml: plugin ./echo.mjs: prefix: expected string but got 3',
    )
    expect(await toolNames()).toEqual(['echo', 'shout'])
    expect(await echo('hi')).toBe('two: hi')
    expect(changes).toBe(before)

    edit('plugins:\n  ./shout.mjs: {}\n')
    await until(() => reloads() === 3 && changes > before, 'the removal and tools/list_changed')
    expect(await toolNames()).toEqual(['shout'])
    const gone = await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
    expect(gone.isError).toBe(true)
    // The same process and connection served every step.
    expect(transport.pid).toBe(pid)
    expect(((await client.callTool({ name: 'shout', arguments: { text: 'still here' } })).content as Array<{ text: string }>)[0].text).toBe('STILL HERE')
  })
})

describe('cordage chat --watch', { timeout: 90_000 }, () => {
  it('reloads between turns and the conversation goes on in the same session', async () => {
    const tape = {
      version: 1,
      turns: [
        { toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] },
        { text: 'first done' },
        {
          toolCalls: [
            { name: 'shout', arguments: { text: 'b' } },
            { name: 'echo', arguments: { text: 'b' } },
          ],
        },
        { text: 'second done' },
      ],
    }
    const dir = project({
      'cordage.yml': 'plugins:\n  ./echo.mjs: { prefix: one }\n',
      'echo.mjs': echoPlugin,
      'shout.mjs': shoutPlugin,
      'tape.json': JSON.stringify(tape),
    })
    const child = spawn(process.execPath, [bin, 'chat', '--watch', '--cassette', 'tape.json'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    try {
      await until(() => stderr.includes('/exit to leave'), 'the chat prompt')
      child.stdin.write('first\n')
      await until(() => stdout.includes('first done'), 'the first turn')
      writeFileSync(join(dir, 'cordage.yml'), 'plugins:\n  ./echo.mjs: { prefix: two }\n  ./shout.mjs: {}\n')
      await until(() => stderr.includes('cordage.yml reloaded: loaded ./shout.mjs; reloaded ./echo.mjs'), 'the reload')
      child.stdin.write('second\n')
      await until(() => stdout.includes('second done'), 'the second turn')
      child.stdin.end()
      expect(await exited).toBe(0)
    } finally {
      child.kill()
    }
    const sessions = join(dir, '.cordage', 'sessions')
    const files = readdirSync(sessions).filter((name) => name.endsWith('.jsonl'))
    expect(files).toHaveLength(1)
    const events = readFileSync(join(sessions, files[0]), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.filter((event) => event.type === 'user/message').map((event) => event.data.content)).toEqual(['first', 'second'])
    const results = events.filter((event) => event.type === 'tool/result').map((event) => event.data.content[0].text)
    expect(results).toEqual(['one: a', 'B', 'two: b'])
  })
})
