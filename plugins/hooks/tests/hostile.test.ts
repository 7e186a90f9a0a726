import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { credentialSamples, exportSamples, harmlessSamples, killAfterEach, processAlive } from '@cordage/testing'
import { codeOf, pre, script, setup, textOf } from './helpers.js'

// Whatever a failing test leaves behind is killed by pid, so one failure does not leak into the machine.
const seen = killAfterEach()

async function readPid(dir: string, name: string): Promise<number> {
  const pid = Number(await readFile(join(dir, name), 'utf8'))
  seen.add(pid)
  return pid
}

describe('hook processes that try to outlive the hook', () => {
  it('a daemon a hook started with setsid dies when the hook exits', async () => {
    const hook = await script(`cat >/dev/null
setsid sleep 1000 >/dev/null 2>&1 < /dev/null &
echo $! > "$(dirname "$0")/daemon.pid"
exit 0`)
    const { ctx } = await setup({ hooks: pre(hook.path) })
    expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
    expect(processAlive(await readPid(hook.dir, 'daemon.pid'))).toBe(false)
  })

  it('a hook that times out takes a setsid child that ignores SIGTERM with it', async () => {
    const hook =
      await script(`setsid sh -c 'trap "" TERM; echo $$ > "$0"; while :; do sleep 0.05; done' "$(dirname "$0")/stubborn.pid" >/dev/null 2>&1 < /dev/null &
sleep 60`)
    const { ctx } = await setup({ hooks: pre(hook.path, { timeout: 0.5 }) })
    expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
    expect(processAlive(await readPid(hook.dir, 'stubborn.pid'))).toBe(false)
  })

  it('unloading the plugin while a hook runs kills its setsid child, and resolves once it is dead', async () => {
    const hook = await script(`setsid sleep 1001 >/dev/null 2>&1 < /dev/null &
echo $! > "$(dirname "$0")/child.pid"
sleep 60`)
    const { ctx, fiber } = await setup({ hooks: pre(hook.path, { timeout: 120 }) })
    const pending = ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    await expect.poll(() => readFile(join(hook.dir, 'child.pid'), 'utf8').catch(() => ''), { timeout: 10_000 }).not.toBe('')
    const child = await readPid(hook.dir, 'child.pid')
    await fiber.dispose()
    expect(processAlive(child)).toBe(false)
    await pending
  })
})

describe('credentials in the host environment', () => {
  let restore: () => void
  beforeAll(() => void (restore = exportSamples()))
  afterAll(() => restore())

  it('none reaches a hook, by name or by value; look-alikes do', async () => {
    const hook = await script('cat >/dev/null\nenv -0 > "$(dirname "$0")/env.txt"')
    const { ctx } = await setup({ hooks: pre(hook.path) })
    expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
    const names = new Set((await readFile(join(hook.dir, 'env.txt'), 'utf8')).split('\0').map((line) => line.slice(0, line.indexOf('='))))
    for (const name of Object.keys(credentialSamples)) expect(names).not.toContain(name)
    for (const name of Object.keys(harmlessSamples)) expect(names).toContain(name)
  })
})

describe('hook output that is malformed or huge', () => {
  it.each([
    ['truncated JSON', `printf '%s' '{"hookSpecificOutput":{"permissionDecision":"deny"'`],
    ['a decision it does not know', `echo '{"hookSpecificOutput":{"permissionDecision":"Deny","permissionDecisionReason":"no"}}'`],
  ])('with preToolUseFailure: deny, %s from a PreToolUse hook fails closed, and says why', async (_what, body) => {
    const hook = await script(`cat >/dev/null\n${body}`)
    const strict = await setup({ hooks: pre(hook.path), preToolUseFailure: 'deny' })
    const result = await strict.ctx.tools.execute({ name: 'bash', arguments: { command: 'rm -rf /' } })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result.content)).toMatch(/^Error: hook ".*" (printed JSON that does not parse|answered permissionDecision "Deny")/)
    // The default stays Claude Code's (fail open), with a warning.
    const loose = await setup({ hooks: pre(hook.path) })
    expect(codeOf(await loose.ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
    expect(loose.ctx.logs.some((log) => log.type === 'warn' && log.text.includes('the call goes ahead (fail open)'))).toBe(true)
  })

  it('a megabyte a hook writes reaches the model bounded, as a denial and as added context', async () => {
    const flood = await script(`cat >/dev/null\nhead -c 1000000 /dev/zero | tr '\\0' x >&2\nexit 2`)
    const { ctx } = await setup({ hooks: pre(flood.path) })
    const denied = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(codeOf(denied)).toBe('DENIED')
    expect(textOf(denied.content).length).toBeLessThan(12_000)
    expect(textOf(denied.content)).toMatch(/\[hook output truncated: 990000 more characters\]$/)
    const context = await script(`cat >/dev/null\nprintf '{"hookSpecificOutput":{"additionalContext":"%s"}}' "$(head -c 1000000 /dev/zero | tr '\\0' y)"`)
    const { ctx: post } = await setup({ hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: context.path }] }] } })
    const result = await post.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(result.isError).toBe(false)
    expect(result.additionalContexts).toHaveLength(1)
    expect(result.additionalContexts![0]!.text.length).toBeLessThan(12_000)
  })
})
