import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { credentialSamples, exportSamples, harmlessSamples, killAfterEach } from '@cordage/testing'
import { alive, code, describeWithPty, eventually, sessionProcesses, setup, tempDir, text, value } from './helpers.js'

const PROMPT = { env: { PS1: 'PROMPT> ' } }

// Whatever a failing test leaves behind is killed by pid, so one failure does not leak into the machine.
const seen = killAfterEach()

function readPid(file: string): number {
  const pid = Number(readFileSync(file, 'utf8').trim())
  seen.add(pid)
  return pid
}

/** CPU time (user + system clock ticks) a process has used so far, from /proc. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

describeWithPty('processes that try to outlive a terminal session', () => {
  it('terminal_close kills a setsid child whose parent already exited (a double fork out of the session)', async () => {
    const { open, call, root } = await setup()
    const { session } = await open(PROMPT)
    await call('send', { id: session.id, input: `(setsid sleep 1000 >/dev/null 2>&1 & echo $! > ${root}/orphan.pid)\r`, waitFor: '^PROMPT>$' })
    const orphan = readPid(join(root, 'orphan.pid'))
    expect(alive(orphan)).toBe(true)
    expect(value(await call('close', { id: session.id })).outcome).toBe('closed')
    expect(alive(orphan)).toBe(false)
  })

  it('a program that exits takes a daemon it double-forked (orphaned into its own session) with it', async () => {
    const { open, root } = await setup()
    await open({ command: `(setsid sleep 1001 >/dev/null 2>&1 & echo $! > ${root}/left.pid); sleep 0.2` })
    const left = readPid(join(root, 'left.pid'))
    expect(await eventually(() => !alive(left))).toBe(true)
  })

  it('unloading the plugin kills a setsid grandchild of a session', async () => {
    const { open, call, root, fiber } = await setup()
    const { session } = await open(PROMPT)
    await call('send', { id: session.id, input: `(setsid sleep 1002 >/dev/null 2>&1 & echo $! > ${root}/unload.pid)\r`, waitFor: '^PROMPT>$' })
    const orphan = readPid(join(root, 'unload.pid'))
    await fiber.dispose()
    expect(alive(orphan)).toBe(false)
  })
})

describeWithPty('output that nobody reads', () => {
  it('an unread `yes` is paused once the buffer is full (it blocks, using no CPU) and resumes on read', async () => {
    const { open, call } = await setup({ scrollback: 200 })
    const { session } = await open({ command: 'yes' })
    const yes = session.pid
    // Paused: the program blocks on its write and stops accumulating CPU time.
    let before = 0
    expect(
      await eventually(() => {
        const now = cpuTicks(yes)
        const still = now === before
        before = now
        return still && readFileSync(`/proc/${yes}/stat`, 'utf8').includes(') S ')
      }, 20_000),
    ).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(cpuTicks(yes)).toBe(before)
    // A read resumes it: output moves on.
    const first = value(await call('read', { id: session.id, since: 0 })).scrollback.end
    let end = first
    for (let attempt = 0; attempt < 400 && end <= first; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      end = value(await call('read', { id: session.id })).scrollback.end
    }
    expect(end).toBeGreaterThan(first)
  })

  it('output arriving unread is paused, not lost: a later read from where the send left off gets every row', async () => {
    const { open, call } = await setup({ scrollback: 300, rows: 10 })
    const { session } = await open(PROMPT)
    const sent = value(await call('send', { id: session.id, input: 'sleep 0.3; seq 1 5000\r', waitForMs: 50 }))
    const from = sent.scrollback.next
    // seq blocks on its write (sleeping, its CPU time standing still) instead of finishing: it is paused.
    const seq = () => sessionProcesses(session.pid).find((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'seq')
    let before = -1
    expect(
      await eventually(() => {
        try {
          const pid = seq()
          if (pid === undefined) return false
          const now = cpuTicks(pid)
          const still = now === before
          before = now
          return still && readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') S ')
        } catch {
          return false // it exited between the listing and the read
        }
      }, 20_000),
    ).toBe(true)
    const read = value(await call('read', { id: session.id, since: from }))
    expect(read.scrollback.lost).toBe(0)
    const command = read.scrollback.lines.indexOf('PROMPT> sleep 0.3; seq 1 5000')
    expect(command).toBeGreaterThanOrEqual(0)
    expect(read.scrollback.lines.slice(command + 1, command + 4)).toEqual(['1', '2', '3'])
    expect(read.scrollback.end - from).toBeLessThan(1000)
    // A send waiting for the end lets it run to completion.
    const done = value(await call('send', { id: session.id, input: '', waitFor: '^5000\\nPROMPT>$', waitForMs: 60_000 }))
    expect(done.wait.reason).toBe('matched')
  })

  it('1 MB of random bytes never reaches the host console: the emulator complains to the debug log, a few lines per session', async () => {
    const printed = [vi.spyOn(console, 'error'), vi.spyOn(console, 'warn'), vi.spyOn(console, 'log'), vi.spyOn(process.stderr, 'write')]
    try {
      const { ctx, open, call } = await setup()
      const { session } = await open({ command: 'head -c 1000000 /dev/urandom; sleep 1000' })
      const result = value(await call('send', { id: session.id, input: '', waitForMs: 3000 }))
      expect(result.session.state).toBe('running')
      await call('close', { id: session.id })
      const complaints = ctx.logs.filter((log) => log.text.startsWith('terminal emulator:'))
      expect(complaints.length).toBeGreaterThan(0)
      expect(complaints.length).toBeLessThanOrEqual(6)
      expect(complaints.every((log) => log.type === 'debug' && log.text.length < 400)).toBe(true)
      for (const spy of printed)
        expect(spy.mock.calls.map((call) => String(call[0])).filter((text) => /Parsing error|terminal emulator/.test(text))).toEqual([])
    } finally {
      for (const spy of printed) spy.mockRestore()
    }
  })
})

describeWithPty('patterns written to stall the host', () => {
  it('a backtracking waitFor fails the send with INVALID_PATTERN instead of holding the event loop', async () => {
    const { open, call } = await setup()
    // "^(a+)+$" against 28 a's and a "!" backtracks 2^28 times: seconds to minutes on one thread.
    const { session } = await open({ command: `printf '%s!\\n' ${'a'.repeat(28)}; sleep 1000` })
    let slowestMs = 0
    let last = performance.now()
    const probe = setInterval(() => {
      const now = performance.now()
      slowestMs = Math.max(slowestMs, now - last)
      last = now
    }, 10)
    try {
      const result = await call('send', { id: session.id, input: '', waitFor: '^(a+)+$', waitForMs: 5000 })
      expect(code(result)).toBe('INVALID_PATTERN')
      expect(text(result)).toContain('took longer than')
    } finally {
      clearInterval(probe)
    }
    // A stall detector: the test is cut off at 500 ms (the backtracking ran 14 s before); 5 s leaves a busy machine its margin.
    expect(slowestMs).toBeLessThan(5000)
    // The session is free for the next send.
    expect(value(await call('send', { id: session.id, input: '', waitFor: 'a!$' })).wait.reason).toBe('matched')
  }, 120_000)
})

describeWithPty('credentials in the host environment', () => {
  let restore: () => void
  beforeAll(() => void (restore = exportSamples()))
  afterAll(() => restore())

  it('none reaches a session, by name or by value; look-alikes do', async () => {
    const { open, root } = await setup()
    await open({ command: `env -0 > ${root}/env.txt` })
    expect(await eventually(() => readFileSync(join(root, 'env.txt'), 'utf8').length > 0)).toBe(true)
    const names = new Set(
      readFileSync(join(root, 'env.txt'), 'utf8')
        .split('\0')
        .map((line) => line.slice(0, line.indexOf('='))),
    )
    for (const name of Object.keys(credentialSamples)) expect(names).not.toContain(name)
    for (const name of Object.keys(harmlessSamples)) expect(names).toContain(name)
  })
})

it('without node-pty the plugin fails at load naming what is missing and how to fix it; the host keeps serving', () => {
  const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures')
  const output = execFileSync(process.execPath, ['--import', join(fixtures, 'hide-node-pty.mjs'), join(fixtures, 'load-without-pty.mjs'), tempDir()], {
    encoding: 'utf8',
    cwd: fixtures,
    timeout: 60_000,
  })
  const report = JSON.parse(output.trim().split('\n').at(-1)!)
  expect(report.terminal.code).toBe('TERMINAL_UNAVAILABLE')
  expect(report.terminal.message).toMatch(/^terminal: the native module node-pty could not be loaded \(Cannot find package 'node-pty'/)
  expect(report.terminal.message).toContain('pnpm install')
  expect(report.tools).toEqual([])
  expect(report.echo).toBe('still serving')
})
