import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeOf, post, pre, script, setup, textOf } from './helpers.js'

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('command hooks', () => {
  it('a PreToolUse script that exits 2 blocks the call with its stderr as feedback', async () => {
    const hook = await script(`input=$(cat)
case "$input" in
  *'"command":"rm '*) echo "rm is not allowed; use trash instead" >&2; exit 2 ;;
esac
exit 0`)
    const { ctx } = await setup({ hooks: pre(hook.path) })
    const blocked = await ctx.tools.execute({ name: 'bash', arguments: { command: 'rm -rf build' } })
    expect(codeOf(blocked)).toBe('DENIED')
    expect(textOf(blocked.content)).toBe('Error: rm is not allowed; use trash instead')
    expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
  })

  it('a PostToolUse script adds context with hookSpecificOutput.additionalContext and receives the Claude Code input', async () => {
    const hook = await script(`cat > "$(dirname "$0")/input.json"
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"Remember to run the tests."}}'`)
    const { ctx } = await setup({ hooks: post(hook.path), cwd: hook.dir, sessionId: 'session-1' })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'make' }, callId: 'call_9' })
    expect(result.isError).toBe(false)
    expect(textOf(result.content)).toBe('output of make')
    expect(result.additionalContexts).toEqual([{ source: 'hooks', text: 'Remember to run the tests.' }])
    const input = JSON.parse(await readFile(join(hook.dir, 'input.json'), 'utf8'))
    expect(input).toEqual({
      session_id: 'session-1',
      transcript_path: '',
      cwd: hook.dir,
      permission_mode: 'default',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'make' },
      tool_use_id: 'call_9',
      cordage_tool_name: 'bash',
      tool_response: { content: [{ type: 'text', text: 'output of make' }], text: 'output of make' },
    })
  })

  it('a PostToolUse script rewrites the output (content only; the value stays)', async () => {
    const hook = await script(`cat >/dev/null
printf '%s' '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"[output hidden by hook]"}}'`)
    const { ctx } = await setup({ hooks: post(hook.path) })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'cat .env' } })
    expect(result.content).toEqual([{ type: 'text', text: '[output hidden by hook]' }])
    expect(result.isError === false && result.value).toEqual({ stdout: 'output of cat .env' })
  })

  it('a PostToolUse decision "block" turns the result into a DENIED failure with the reason', async () => {
    const hook = await script(`echo '{"decision":"block","reason":"Lint failed: fix src/a.ts first."}'`)
    const { ctx } = await setup({ hooks: post(hook.path) })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'make' } })
    expect(codeOf(result)).toBe('DENIED')
    expect(result.content).toEqual([{ type: 'text', text: 'Lint failed: fix src/a.ts first.' }])
  })

  it('a hook that times out is killed with its process tree and the call goes ahead (fail open)', async () => {
    const hook = await script(`sleep 60 &
echo $! > "$(dirname "$0")/child.pid"
sleep 60`)
    const { ctx } = await setup({ hooks: pre(hook.path, { timeout: 0.5 }) })
    const started = Date.now()
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    // A hang bound (20× the hook's 0.5 s timeout): a hook left running would hold the call for its 60 s.
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(codeOf(result)).toBe('OK')
    const child = Number(await readFile(join(hook.dir, 'child.pid'), 'utf8'))
    await expect.poll(() => isAlive(child), { timeout: 3_000 }).toBe(false)
    expect(ctx.logs.some((log) => log.type === 'warn' && /timed out after 0\.5 s; the call goes ahead \(fail open\)/.test(log.text))).toBe(true)
  })

  it('a hook that exits 1 is a non-blocking error: logged, the call goes ahead', async () => {
    const hook = await script(`echo "hook bug" >&2
exit 1`)
    const { ctx } = await setup({ hooks: { ...pre(hook.path), ...post(hook.path) } })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(codeOf(result)).toBe('OK')
    expect(textOf(result.content)).toBe('output of ls')
    const warnings = ctx.logs.filter((log) => log.type === 'warn').map((log) => log.text)
    expect(warnings.some((text) => text.includes('exited with code 1: hook bug') && text.includes('the call goes ahead'))).toBe(true)
    expect(warnings.some((text) => text.includes('exited with code 1: hook bug') && text.includes('the result is kept'))).toBe(true)
  })

  it('with preToolUseFailure: deny, a failing PreToolUse hook denies (fail closed)', async () => {
    const hook = await script('exit 1')
    const { ctx } = await setup({ hooks: pre(hook.path), preToolUseFailure: 'deny' })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result.content)).toContain('exited with code 1, so the call was denied')
  })

  it.each([
    [
      'deny',
      '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}',
      'Error: not on Fridays',
    ],
    [
      'ask (no approval service)',
      '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"confirm"}}',
      'Error: approval required (confirm), but no approval service is available',
    ],
    ['updatedInput (unsupported)', '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"ls"}}}', 'Error: hook'],
    ['legacy decision block', '{"decision":"block","reason":"legacy says no"}', 'Error: legacy says no'],
  ])('PreToolUse JSON %s denies', async (_name, json, text) => {
    const hook = await script(`echo '${json}'`)
    const { ctx } = await setup({ hooks: pre(hook.path) })
    const result = await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } })
    expect(codeOf(result)).toBe('DENIED')
    expect(textOf(result.content).startsWith(text)).toBe(true)
  })

  it('PreToolUse allow and plain-text stdout are no objection', async () => {
    const allow = await script(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
    const chatty = await script('echo "just logging"')
    const { ctx } = await setup({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash|Edit',
            hooks: [
              { type: 'command', command: allow.path },
              { type: 'command', command: chatty.path },
            ],
          },
        ],
      },
    })
    expect(codeOf(await ctx.tools.execute({ name: 'bash', arguments: { command: 'ls' } }))).toBe('OK')
  })
})
