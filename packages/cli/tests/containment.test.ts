import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cordage, project } from './helpers.js'
import { start, waitFor, type Running } from './processes.js'

/** A third-party tool that leaves a rejected promise nobody awaits and a throwing timer behind. */
const strayPlugin = `
export const name = 'stray'
export const inject = ['tools']
export function apply(ctx) {
  ctx.tools.register({
    name: 'stray',
    description: 'Answers, and leaves stray errors behind.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    output: { schema: { type: 'string' }, render: (args, value) => [{ type: 'text', text: value }] },
    execute: () => {
      Promise.reject(new Error('stray rejection'))
      setTimeout(() => { throw new Error('timer boom') }, 0)
      return 'fine'
    },
  })
}
`

const running: Running[] = []
afterEach(() => {
  for (const { child } of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

describe('stray errors from a third-party tool', { timeout: 60_000 }, () => {
  it('cordage mcp serve logs and contains them and keeps answering', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./stray.mjs: {}\n', 'stray.mjs': strayPlugin })
    const server = start(['mcp', 'serve'], dir)
    running.push(server)
    const send = (message: object) => server.child.stdin!.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n')
    const answer = (id: number) =>
      waitFor(
        () =>
          server
            .stdout()
            .split('\n')
            .some((line) => line.includes(`"id":${id}`)),
        20_000,
      )
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } })
    expect(await answer(1), server.stderr()).toBe(true)
    send({ method: 'notifications/initialized' })
    send({ id: 2, method: 'tools/call', params: { name: 'stray', arguments: {} } })
    expect(await answer(2), server.stderr()).toBe(true)
    expect(await waitFor(() => /UNCAUGHT_EXCEPTION/.test(server.stderr()), 5_000), server.stderr()).toBe(true)
    send({ id: 3, method: 'tools/call', params: { name: 'stray', arguments: {} } })
    expect(await answer(3), server.stderr()).toBe(true)
    expect(server.stdout()).toContain('"text":"fine"')
    expect(server.stderr()).toMatch(/an unhandled promise rejection was contained \(UNHANDLED_REJECTION\): stray rejection/)
    expect(server.stderr()).toMatch(/an uncaught exception \(a throw from a callback or timer\) was contained \(UNCAUGHT_EXCEPTION\): timer boom/)
    server.child.stdin!.end()
    expect(await server.exited).toEqual({ code: 0, signal: null })
  })

  it('cordage run logs and contains them and completes the run', async () => {
    const tape = {
      version: 1,
      turns: [
        {
          toolCalls: [
            { id: 'call_1', name: 'stray', arguments: {} },
            { id: 'call_2', name: 'stray', arguments: {} },
          ],
        },
        { text: 'All fine.' },
      ],
    }
    const dir = project({ 'cordage.yml': 'plugins:\n  ./stray.mjs: {}\n', 'stray.mjs': strayPlugin, 'tape.json': JSON.stringify(tape) })
    const run = await cordage(['run', '--cassette', 'tape.json', 'go'], { cwd: dir })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('All fine.')
    expect(run.stderr).toMatch(/\(UNHANDLED_REJECTION\): stray rejection/)
    expect(run.stderr).toMatch(/\(UNCAUGHT_EXCEPTION\): timer boom/)
    const sessions = join(dir, '.cordage', 'sessions')
    const file = readdirSync(sessions).find((name) => name.endsWith('.jsonl'))!
    const events = readFileSync(join(sessions, file), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
  })

  it('a command whose event loop empties before it finishes says so (UNSETTLED_EXIT) instead of exiting 13 silently', async () => {
    // Stops reading stdin without ending it: what the SDK's stdio transport did on an oversized frame.
    const quitter = `export const name = 'quit'
export function apply() {
  setTimeout(() => {
    for (const event of ['data', 'end', 'close', 'readable']) process.stdin.removeAllListeners(event)
    process.stdin.pause()
    process.stderr.write('quit reading stdin\\n')
  }, 300)
}
`
    const dir = project({ 'cordage.yml': 'plugins:\n  ./quit.mjs: {}\n', 'quit.mjs': quitter })
    const server = start(['mcp', 'serve'], dir)
    running.push(server)
    expect(await waitFor(() => server.stderr().includes('on stdio'), 20_000)).toBe(true)
    expect(await waitFor(() => server.stderr().includes('quit reading stdin'), 20_000)).toBe(true)
    // Once stdin's pipe is gone too, nothing is left to keep the process alive.
    server.child.stdin!.end()
    expect(await server.exited).toEqual({ code: 13, signal: null })
    expect(server.stderr()).toMatch(/cordage mcp serve: stopped with nothing left to run before the command finished \(UNSETTLED_EXIT, exit 13\)/)
  })
})
