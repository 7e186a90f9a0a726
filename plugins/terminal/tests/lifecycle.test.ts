import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { alive, eventually, sessionProcesses, setup, tempDir, text, value, describeWithPty } from './helpers.js'

const PROMPT = { env: { PS1: 'PROMPT> ' } }

/**
 * Starts `sleep 1000 &` and, under a waiting subshell, a `setsid` sleep (which leaves the session but stays
 * a descendant) in a shell session; returns their pids.
 */
async function leaveChildren(call: Awaited<ReturnType<typeof setup>>['call'], id: string, root: string) {
  await call('send', { id, input: `sleep 1000 & echo $! > ${root}/a.pid; (setsid sleep 1001 & echo $! > ${root}/b.pid; wait) &\r`, waitForMs: 500 })
  return [readFileSync(join(root, 'a.pid'), 'utf8'), readFileSync(join(root, 'b.pid'), 'utf8')].map(Number)
}

describeWithPty('session lifetime', () => {
  it('close kills the whole session: the shell, its background job and a setsid grandchild', async () => {
    const { open, call, root } = await setup()
    const { session } = await open(PROMPT)
    const [job, escaped] = await leaveChildren(call, session.id, root)
    expect(sessionProcesses(session.pid)).toEqual(expect.arrayContaining([session.pid, job]))
    expect(alive(escaped!)).toBe(true)
    expect(sessionProcesses(session.pid)).not.toContain(escaped)
    const closed = value(await call('close', { id: session.id }))
    expect(closed.outcome).toBe('closed')
    expect(closed.session.state).toBe('exited')
    expect(sessionProcesses(session.pid)).toEqual([])
    expect(alive(escaped!)).toBe(false)
    expect(text(await call('list', {}))).toBe('(no terminal sessions)')
    expect(text(await call('read', { id: session.id }))).toMatch(/unknown terminal session/)
  })

  it('unloading the plugin closes every session, unregisters the tools and removes its exit hook', async () => {
    const exitListeners = process.listenerCount('exit')
    const { ctx, open, call, root, fiber } = await setup()
    expect(process.listenerCount('exit')).toBe(exitListeners + 1)
    const first = (await open(PROMPT)).session
    const second = (await open({ command: 'sleep 1000' })).session
    const [job] = await leaveChildren(call, first.id, root)
    await fiber.dispose()
    expect(sessionProcesses(first.pid)).toEqual([])
    expect(sessionProcesses(second.pid)).toEqual([])
    expect(alive(job!)).toBe(false)
    expect(ctx.tools.list().filter((tool) => tool.name.startsWith('terminal_'))).toEqual([])
    expect(process.listenerCount('exit')).toBe(exitListeners)
  })

  it('unloading while a send waits settles the call and kills the session', async () => {
    const { open, call, fiber } = await setup()
    const { session } = await open(PROMPT)
    const pending = call('send', { id: session.id, input: 'sleep 1000\r', waitFor: 'never-printed', waitForMs: 120_000 })
    // The send is waiting once the shell runs its command.
    expect(await eventually(() => sessionProcesses(session.pid).length > 1, 20_000)).toBe(true)
    await fiber.dispose()
    const settled = await Promise.race([pending.then(() => true), new Promise((resolve) => setTimeout(resolve, 15_000, false))])
    expect(settled).toBe(true)
    expect(sessionProcesses(session.pid)).toEqual([])
  })

  it('a program that exits leaves nothing behind, even a nohup child', async () => {
    const { open, root } = await setup()
    const { session } = await open({ command: `nohup sleep 1000 >/dev/null 2>&1 & echo $! > ${root}/n.pid` })
    const orphan = Number(readFileSync(join(root, 'n.pid'), 'utf8'))
    expect(await eventually(() => !alive(orphan))).toBe(true)
    expect(sessionProcesses(session.pid)).toEqual([])
  })

  it('an idle session is closed, its processes killed, and the agent told', async () => {
    const { open, call, notices } = await setup({ idleTimeoutMs: 300 })
    const { session } = await open(PROMPT)
    expect(await eventually(() => notices.length > 0)).toBe(true)
    expect(notices[0]!.text).toBe(`Terminal ${session.id} (bash --noprofile --norc -i) was closed after 0 s without use; open a new one if you still need it.`)
    expect(await eventually(() => sessionProcesses(session.pid).length === 0)).toBe(true)
    expect(value(await call('list', {})).sessions).toEqual([])
  })

  it('terminal_signal reaches the foreground job, not the shell', async () => {
    const { open, call } = await setup()
    const { session } = await open(PROMPT)
    const running = value(await call('send', { id: session.id, input: 'sleep 100\r', waitForMs: 300 }))
    expect(running.screen.lines.slice(-2)).toEqual(['PROMPT> sleep 100', ''])
    const signalled = value(await call('signal', { id: session.id, signal: 'SIGINT' }))
    expect(signalled.processGroup).not.toBe(session.pid)
    const back = value(await call('send', { id: session.id, input: '', waitFor: '^PROMPT>$' }))
    expect(back.wait.reason).toBe('matched')
    expect(back.session.state).toBe('running')
  })

  it('the process exiting kills its sessions (exit hook), grandchildren included', async () => {
    const root = tempDir()
    const fixture = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'exit-child.mjs')
    const output = execFileSync(process.execPath, [fixture, root], { encoding: 'utf8', cwd: dirname(fixture), timeout: 30_000 })
    const { leader, grandchild } = JSON.parse(output.trim().split('\n').at(-1)!)
    expect(grandchild).toBeGreaterThan(0)
    expect(await eventually(() => !alive(grandchild) && sessionProcesses(leader).length === 0, 5000)).toBe(true)
  })
})
