import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { setup, text, value, describeWithPty } from './helpers.js'

describeWithPty('interactive programs', () => {
  it('python3 -i: the prompt, an evaluation, an interrupt and the exit code', async () => {
    const { open, call } = await setup()
    const opened = await open({ command: 'python3 -i -q', env: { PYTHONSTARTUP: '' } })
    expect(opened.screen.lines.at(-1)).toBe('>>>')
    const id = opened.session.id
    const sum = value(await call('send', { id, input: 'print(6 * 7)\r', waitFor: '^42\\n>>>$' }))
    expect(sum.screen.lines.slice(-3)).toEqual(['>>> print(6 * 7)', '42', '>>>'])
    const loop = value(await call('send', { id, input: 'while True: pass\r\r', waitForMs: 300 }))
    expect(loop.screen.lines.slice(-3)).toEqual(['>>> while True: pass', '...', ''])
    value(await call('signal', { id, signal: 'SIGINT' }))
    const interrupted = value(await call('send', { id, input: '', waitFor: '^KeyboardInterrupt' }))
    expect(interrupted.wait.reason).toBe('matched')
    const exited = value(await call('send', { id, input: 'import sys; sys.exit(4)\r' }))
    expect(exited.wait.reason).toBe('exited')
    expect(exited.session).toMatchObject({ state: 'exited', exitCode: 4 })
  })

  it('vi: the screen shows the file and the ~ lines a user sees, and edits reach the file', async () => {
    const { root, open, call } = await setup()
    writeFileSync(join(root, 'notes.txt'), 'hello from the file\nsecond line\n')
    const opened = await open({ command: 'vi notes.txt', cols: 60, rows: 12, env: { HOME: root } })
    const screen = opened.screen
    expect(screen.alternate).toBe(true)
    expect(screen.lines.slice(0, 2)).toEqual(['hello from the file', 'second line'])
    expect(screen.lines.slice(2, 11).every((line: string) => line === '~')).toBe(true)
    expect(screen.lines[11]).toMatch(/^"notes\.txt" 2L, 32B/)
    expect(screen.cursor).toEqual({ row: 1, col: 1 })
    expect(text(await call('read', { id: opened.session.id }))).toMatch(/^\[full-screen program, 60x12\]\nhello from the file\nsecond line\n~\n/)
    const edited = value(await call('send', { id: opened.session.id, input: 'A!\u001b', waitFor: 'file!$' }))
    expect(edited.screen.lines[0]).toBe('hello from the file!')
    const saved = value(await call('send', { id: opened.session.id, input: ':wq\r' }))
    expect(saved.wait.reason).toBe('exited')
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('hello from the file!\nsecond line\n')
  })

  it('top: a full-screen program redrawing in place shows its current frame', async () => {
    const { open, call } = await setup()
    const opened = await open({ command: 'top -d 0.3', cols: 100, rows: 20 })
    const id = opened.session.id
    const frame = value(await call('send', { id, input: '', waitFor: 'PID\\s+USER' }))
    expect(frame.screen.lines[0]).toMatch(/^top - \d\d:\d\d:\d\d up .*load average/)
    expect(frame.screen.lines.filter((line: string) => /^\s*PID\s+USER/.test(line))).toHaveLength(1)
    const quit = value(await call('send', { id, input: 'q' }))
    expect(quit.wait.reason).toBe('exited')
  })
})
