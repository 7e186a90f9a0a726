import { mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { testToolContract } from '@cordage/testing'
import * as terminal from '../src/index.js'
import { code, describeWithPty, eventually, sessionProcesses, setup, tempDir, text, value } from './helpers.js'

const contractRoot = tempDir()
describeWithPty('the tool contract', () =>
  testToolContract(terminal, {
    config: { root: contractRoot },
    cases: [
      { tool: 'terminal_open', arguments: { command: 'echo hello' } },
      { tool: 'terminal_open', arguments: { command: 'seq 1 200000', rows: 10 } },
      { tool: 'terminal_open', arguments: { cwd: '..' }, expect: 'error' },
      { tool: 'terminal_open', arguments: { cols: 5 }, expect: 'error' },
      { tool: 'terminal_open', arguments: { env: { 'BAD NAME': 'x' } }, expect: 'error' },
      { tool: 'terminal_list', arguments: {} },
      { tool: 'terminal_send', arguments: { id: 'term_0', input: 'ls\r' }, expect: 'error' },
      { tool: 'terminal_read', arguments: { id: 'term_0' }, expect: 'error' },
      { tool: 'terminal_signal', arguments: { id: 'term_0', signal: 'SIGINT' }, expect: 'error' },
      { tool: 'terminal_signal', arguments: { id: 'term_0', signal: 'SIGSEGV' }, expect: 'error' },
      { tool: 'terminal_close', arguments: { id: 'term_0' }, expect: 'error' },
    ],
  }),
)

const PROMPT = { env: { PS1: 'PROMPT> ' } }

describeWithPty('a bash session', () => {
  it('opens on the prompt and keeps shell state between sends', async () => {
    const { open, call } = await setup()
    const opened = await open(PROMPT)
    expect(opened.session).toMatchObject({ id: expect.stringMatching(/^term_\d+$/), state: 'running', cols: 120, rows: 40, exitCode: null })
    expect(opened.screen.lines.at(-1)).toBe('PROMPT>')
    const id = opened.session.id
    value(await call('send', { id, input: 'export X=42; cd /tmp\r' }))
    const echoed = await call('send', { id, input: 'echo "x is $X in $(pwd)"\r', waitFor: '^x is .*\\nPROMPT>$' })
    expect(value(echoed).wait.reason).toBe('matched')
    expect(value(echoed).screen.lines).toContain('x is 42 in /tmp')
    expect(text(echoed)).toMatch(/x is 42 in \/tmp\nPROMPT>\n\[term_\d+ running; cursor at row \d+, col 9; next read since 0; waitFor matched after \d+ ms\]$/)
  })

  it('never shows escape sequences: colours, cursor moves and titles are interpreted', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const result = await call('send', {
      id: session.id,
      input: `printf '\\033]0;my title\\007\\033[31mred\\033[0m \\033[1mbold\\033[0m\\n'; printf 'abc\\033[2Dz\\n'\r`,
      waitFor: '^az',
    })
    const view = value(result)
    expect(view.screen.lines).toContain('red bold')
    expect(view.screen.lines).toContain('azc')
    expect(view.screen.title).toBe('my title')
    expect(JSON.stringify(view)).not.toMatch(/\\u001b|\\u0007/)
    // oxlint-disable-next-line no-control-regex
    expect(text(result)).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/)
  })

  it('returns what scrolled off the screen during a send, and pages it with since', async () => {
    const { open, call } = await setup({ rows: 10 })
    const { session } = await open(PROMPT)
    const sent = value(await call('send', { id: session.id, input: 'seq 1 50\r', waitFor: '^50\nPROMPT>$' }))
    // The command line, 1..50 and the prompt: 52 rows, 10 on screen, the rest scrolled by.
    expect([...sent.scrollback.lines, ...sent.screen.lines].join('\n')).toContain(
      ['PROMPT> seq 1 50', ...Array.from({ length: 50 }, (_, i) => String(i + 1)), 'PROMPT>'].join('\n'),
    )
    expect(sent.scrollback).toMatchObject({ lost: 0, omitted: 0, from: 0 })
    const page = value(await call('read', { id: session.id, since: 5 }))
    expect(page.scrollback.from).toBe(5)
    expect(page.scrollback.lines[0]).toBe('5')
    expect(page.scrollback.next).toBe(page.scrollback.end)
    const screenOnly = value(await call('read', { id: session.id }))
    expect(screenOnly.scrollback.lines).toEqual([])
    expect(screenOnly.screen.lines).toEqual(sent.screen.lines)
  })

  it('bounds a flood: the result keeps the newest rows and names the read for the rest', async () => {
    const { open, call } = await setup({ rows: 10, scrollback: 3000, maxReadLines: 100, maxReadBytes: 2000 })
    const { session } = await open(PROMPT)
    const result = await call('send', { id: session.id, input: 'seq 1 100000\r', waitFor: '^100000\\nPROMPT>$', waitForMs: 60_000 })
    const sent = value(result)
    expect(sent.wait.reason).toBe('matched')
    expect(Buffer.byteLength(sent.scrollback.lines.join('\n'))).toBeLessThanOrEqual(2000)
    expect(sent.scrollback.lost).toBeGreaterThan(90_000)
    expect(sent.scrollback.omitted).toBeGreaterThan(2000)
    // Nine rows of numbers and the prompt fill the 10-row screen; the scrollback ends just above.
    expect(sent.scrollback.lines.at(-1)).toBe(String(100000 - 9))
    expect(text(result)).toMatch(/earlier rows are no longer in the scrollback/)
    expect(text(result)).toMatch(/earlier rows left out; terminal_read \{"id":"term_\d+","since":\d+\} shows them/)
    expect(Buffer.byteLength(text(result))).toBeLessThan(4000)
    // Row numbers stay absolute after the scrollback trimmed: reading from the first kept row pages forward.
    const page = value(await call('read', { id: session.id, since: sent.scrollback.from - sent.scrollback.omitted }))
    expect(page.scrollback.lines).toHaveLength(100)
    expect(Number(page.scrollback.lines[0]) + 99).toBe(Number(page.scrollback.lines[99]))
  }, 90_000)

  it('reports the exit of the program and refuses input after it, while the last screen stays readable', async () => {
    const { open, call, notices } = await setup()
    const { session } = await open(PROMPT)
    // Output in the instant before a pty closes can be lost (a Linux pty race), so "bye" comes first.
    value(await call('send', { id: session.id, input: 'echo bye\r', waitFor: '^bye$' }))
    const ended = value(await call('send', { id: session.id, input: 'exit 3\r' }))
    expect(ended.wait.reason).toBe('exited')
    expect(ended.session).toMatchObject({ state: 'exited', exitCode: 3, signal: null })
    expect(notices).toEqual([])
    const refused = await call('send', { id: session.id, input: 'ls\r' })
    expect(code(refused)).toBe('SESSION_EXITED')
    expect(text(refused)).toMatch(/has exited with code 3; read its last screen with terminal_read/)
    expect(value(await call('read', { id: session.id })).screen.lines).toContain('bye')
    expect(text(await call('list', {}))).toMatch(/^term_\d+ exited with code 3: bash --noprofile --norc -i/)
  })

  it('tells the agent when a program ends outside a call', async () => {
    const { open, notices } = await setup()
    const { session } = await open({ command: 'sleep 0.3; echo done' })
    expect(await eventually(() => notices.length > 0)).toBe(true)
    expect(notices).toEqual([
      {
        source: 'terminal',
        text: `Terminal ${session.id} (sleep 0.3; echo done) exited with code 0. Its last screen stays readable with terminal_read until terminal_close.`,
      },
    ])
  })

  it('refuses a second send while one waits, and a bad pattern, with codes', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const first = call('send', { id: session.id, input: 'sleep 1\r', waitFor: '^PROMPT>$', waitForMs: 5000 })
    // The first send is waiting once the shell runs its command.
    expect(await eventually(() => sessionProcesses(session.pid).length > 1, 20_000)).toBe(true)
    const second = await call('send', { id: session.id, input: 'ls\r' })
    expect(code(second)).toBe('SEND_ACTIVE')
    expect(value(await first).wait.reason).toBe('matched')
    expect(code(await call('send', { id: session.id, input: '', waitFor: '(' }))).toBe('INVALID_PATTERN')
  })

  it('waitFor looks at what the input changed: a pattern already on screen does not end the next wait', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    expect(value(await call('send', { id: session.id, input: 'echo done\r', waitFor: '^done$' })).wait.reason).toBe('matched')
    const second = value(await call('send', { id: session.id, input: 'sleep 0.5; echo done\r', waitFor: '^done$' }))
    expect(second.wait.reason).toBe('matched')
    expect(second.wait.waitedMs).toBeGreaterThanOrEqual(450)
    // A bare wait ("until the screen shows it") answers from the screen: nothing more is printed, so a
    // wait for new output could only end at the 10 s default, as 'timeout'.
    expect(value(await call('send', { id: session.id, input: '', waitFor: '^done$' })).wait.reason).toBe('matched')
  })

  it('waits a fixed time with waitForMs alone, and cancels with the caller', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const fixed = value(await call('send', { id: session.id, input: '', waitForMs: 400 }))
    expect(fixed.wait.reason).toBe('elapsed')
    expect(fixed.wait.waitedMs).toBeGreaterThanOrEqual(390)
    const controller = new AbortController()
    const pending = call('send', { id: session.id, input: 'sleep 30\r', waitFor: 'never-printed', waitForMs: 60_000 }, { signal: controller.signal })
    setTimeout(() => controller.abort(), 200)
    const started = Date.now()
    expect(code(await pending)).toBe('ABORTED')
    // A hang bound: the abort comes after 200 ms, the wait it ends is a minute long.
    expect(Date.now() - started).toBeLessThan(10_000)
    // The session is free again.
    const interrupted = value(await call('send', { id: session.id, input: '\u0003', waitFor: '^PROMPT>$' }))
    expect(interrupted.wait.reason).toBe('matched')
  })

  it('fences sessions to the agent that opened them', async () => {
    const { call } = await setup()
    const opened = value(await call('open', PROMPT, { agent: 'alice' }))
    const id = opened.session.id
    expect(code(await call('read', { id }, { agent: 'bob' }))).toBe('FOREIGN_SESSION')
    expect(code(await call('close', { id }, { agent: 'bob' }))).toBe('FOREIGN_SESSION')
    expect(value(await call('list', {}, { agent: 'bob' })).sessions).toEqual([])
    expect(value(await call('list', {}, { agent: 'alice' })).sessions.map((s: any) => s.id)).toEqual([id])
  })

  it('limits open sessions and names them', async () => {
    const { open, call } = await setup({ maxSessions: 2 })
    const a = (await open()).session.id
    const b = (await open()).session.id
    const third = await call('open', {})
    expect(code(third)).toBe('TOO_MANY_SESSIONS')
    expect(text(third)).toContain(`(${a}, ${b}); close one with terminal_close first`)
  })

  it('keeps cwd inside the root (symlinks followed) and scrubs credentials from the environment', async () => {
    const { root, open, call } = await setup({ env: { set: { FROM_CONFIG: 'c' } } })
    mkdirSync(join(root, 'sub'))
    symlinkSync('/etc', join(root, 'escape'))
    expect(code(await call('open', { cwd: 'escape' }))).toBe('INVALID_CWD')
    expect(code(await call('open', { cwd: 'missing' }))).toBe('INVALID_CWD')
    expect(code(await call('open', { env: { '1X': 'y' } }))).toBe('INVALID_ENV')
    process.env.CORDAGE_TEST_API_KEY = 'sk-secret'
    try {
      const opened = await open({
        cwd: 'sub',
        env: { FROM_CALL: 'b' },
        command: 'printf "%s|%s|%s|%s|%s\\n" "$(pwd)" "$CORDAGE_TEST_API_KEY" "$FROM_CONFIG" "$FROM_CALL" "$TERM"; sleep 5',
      })
      expect(opened.screen.lines[0]).toBe(`${join(root, 'sub')}||c|b|xterm-256color`)
    } finally {
      delete process.env.CORDAGE_TEST_API_KEY
    }
  })

  it('shows a missing command on the screen, and refuses a missing shell or a bad config at load', async () => {
    const { open } = await setup()
    const opened = await open({ command: 'no-such-command-xyz' })
    expect(opened.session).toMatchObject({ state: 'exited', exitCode: 127 })
    expect(opened.screen.lines[0]).toMatch(/no-such-command-xyz: command not found/)
    await expect(setup({ shell: 'no-such-shell-xyz' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: 'terminal: shell: "no-such-shell-xyz" is not an executable file on PATH',
    })
    await expect(setup({ cols: 900 })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: 'terminal: cols: 900 exceeds maxCols (400)' })
    await expect(setup({ colls: 90 } as never)).rejects.toMatchObject({ code: 'INVALID_CONFIG' })
  })

  it('declares cwd as a written path for path-aware policy', async () => {
    const { ctx } = await setup()
    expect(ctx.tools.get('terminal_open')!.paths).toEqual([{ pointer: '/cwd', access: 'write', default: '.' }])
  })
})
