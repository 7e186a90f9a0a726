import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { listenerCount as listeners } from '@cordage/registry'
import { createTestContext } from '@cordage/testing'
import * as Hooks from '../src/index.js'
import { compileMatcher } from '../src/settings.js'
import { codeOf, script, setup, textOf, toolsPlugin } from './helpers.js'

describe('settings.json and config', () => {
  it('uses the hooks section of an existing Claude Code settings.json, with $CLAUDE_PROJECT_DIR', async () => {
    const project = await mkdtemp(join(tmpdir(), 'cordage-hooks-project-'))
    await script(
      `echo "$CLAUDE_PROJECT_DIR" > "$CLAUDE_PROJECT_DIR/seen.txt"
echo "no network commands" >&2
exit 2`,
      project,
    )
    const [hookFile] = (await import('node:fs')).readdirSync(project).filter((file) => file.endsWith('.sh'))
    await writeFile(
      join(project, 'settings.json'),
      JSON.stringify({
        permissions: { allow: [] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `"$CLAUDE_PROJECT_DIR"/${hookFile}`, timeout: 5 }] }],
          Stop: [{ hooks: [{ type: 'command', command: 'true' }] }],
        },
      }),
    )
    const { ctx } = await setup({ settingsFile: 'settings.json', cwd: project })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'curl example.com' } })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result.content)).toBe('Error: no network commands')
    expect((await readFile(join(project, 'seen.txt'), 'utf8')).trim()).toBe(project)
    expect(ctx.logs.some((log) => log.type === 'warn' && log.text.includes('hooks.Stop: the Stop event is not supported'))).toBe(true)
  })

  it.each([
    [
      { hooks: { PreToolUse: [{ matcher: '(', hooks: [{ type: 'command', command: 'true' }] }] } },
      /config hooks\.PreToolUse\[0\]\.matcher: bad regular expression/,
    ],
    [
      { hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: '' }] }] } },
      /config hooks\.PostToolUse\[0\]\.hooks\[0\]\.command must be a non-empty string/,
    ],
    [{ hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout: -1 }] }] } }, /timeout must be a positive number of seconds/],
    [{ hooks: { PreToolUse: { matcher: 'x' } } }, /config hooks\.PreToolUse must be an array/],
    [{ settingsFile: '/nonexistent/settings.json' }, /cannot read settingsFile \/nonexistent\/settings\.json/],
  ])('rejects bad hooks at load: %j', async (config, message) => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Hooks, config as never)).rejects.toThrow(message)
  })

  it.each([
    [undefined, 'anything', true],
    ['*', 'anything', true],
    ['Edit|Write', 'Write', true],
    ['Edit|Write', 'WriteFile', false],
    ['mcp__.*', 'mcp__fs__read', true],
    ['Notebook.*', 'NotebookEdit', true],
  ])('matcher %s against %s → %s', (matcher, name, expected) => {
    expect(compileMatcher(matcher)([name])).toBe(expected)
  })

  it('a PreToolUse additionalContext reaches the result of an allowed call', async () => {
    const hook = await script(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"cwd is clean"}}'`)
    const { ctx } = await setup({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook.path }] }] } })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(result.additionalContexts).toEqual([{ source: 'hooks', text: 'cwd is clean' }])
  })
})

describe('hooks lifecycle', () => {
  it('load → run → dispose: listeners are removed and a running hook process group is killed', async () => {
    const hook = await script(`echo $$ > "$(dirname "$0")/hook.pid"
sleep 60`)
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(toolsPlugin)
    const fiber = await ctx.plugin(Hooks, {
      hooks: {
        PreToolUse: [{ hooks: [{ type: 'command', command: hook.path, timeout: 60 }] }],
        PostToolUse: [{ hooks: [{ type: 'command', command: 'true' }] }],
      },
    })
    expect(listeners(ctx, 'tools/pre-execute')).toBe(1)
    expect(listeners(ctx, 'tools/post-execute')).toBe(1)
    const call = ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    const pidFile = join(hook.dir, 'hook.pid')
    await expect.poll(async () => (await readFile(pidFile, 'utf8').catch(() => '')).trim().length > 0, { timeout: 5_000 }).toBe(true)
    const pid = Number(await readFile(pidFile, 'utf8'))
    await fiber.dispose()
    expect(listeners(ctx, 'tools/pre-execute')).toBe(0)
    expect(listeners(ctx, 'tools/post-execute')).toBe(0)
    const result = await call
    expect(codeOf(result)).toBe('OK')
    await expect
      .poll(
        () => {
          try {
            process.kill(pid, 0)
            return true
          } catch {
            return false
          }
        },
        { timeout: 3_000 },
      )
      .toBe(false)
  })
})
