import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { project } from './helpers.js'
import { processesWith, sleepers, start, waitFor, type Running } from './processes.js'

const SLEEPERS = 20
const running: Running[] = []
const markers: string[] = []
afterEach(() => {
  for (const { child } of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  // A failed case must not leave its sleepers to the next one.
  for (const pid of markers.splice(0).flatMap(processesWith)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
})

const cassette = (command: string) =>
  JSON.stringify({
    version: 1,
    turns: [{ text: 'Starting.', toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command, timeout_ms: 300_000 } }] }, { text: 'Done.' }],
  })

function sessionEvents(dir: string): Array<{ type: string; data: any }> {
  const sessions = join(dir, '.cordage', 'sessions')
  const file = readdirSync(sessions).find((name) => name.endsWith('.jsonl'))!
  return readFileSync(join(sessions, file), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
}

const CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const

// The default preset (fs, shell, jobs, …) with a real bash; each case spawns the built command.
describe.each(['SIGTERM', 'SIGHUP', 'SIGINT'] as const)('%s', { timeout: 60_000 }, (signal) => {
  it.each(['call', 'run', 'chat'] as const)(`to cordage %s kills the running process tree, ends the session and exits 128+signal`, async (command) => {
    const { command: script, marker } = sleepers(SLEEPERS)
    markers.push(marker)
    const dir = project({ 'tape.json': cassette(script) })
    const cli =
      command === 'call'
        ? start(['call', 'bash', JSON.stringify({ command: script, timeout_ms: 300_000 })], dir)
        : command === 'run'
          ? start(['run', '--cassette', 'tape.json', 'start the sleepers'], dir)
          : start(['chat', '--cassette', 'tape.json'], dir, 'start the sleepers\n')
    running.push(cli)
    expect(await waitFor(() => processesWith(marker).length > SLEEPERS, 20_000), `sleepers started; stderr: ${cli.stderr()}`).toBe(true)
    cli.child.kill(signal)
    if (command === 'chat' && signal === 'SIGINT') {
      // In chat, Ctrl-C stops the running turn only: the conversation goes on until the input ends.
      expect(await waitFor(() => processesWith(marker).length === 0, 20_000)).toBe(true)
      expect(cli.child.exitCode).toBe(null)
      cli.child.stdin!.end()
      expect(await cli.exited).toEqual({ code: 0, signal: null })
      expect(sessionEvents(dir).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'aborted' } })
      return
    }
    const exit = await Promise.race([cli.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000))])
    expect(exit, cli.stderr()).toEqual({ code: CODES[signal], signal: null })
    expect(processesWith(marker)).toEqual([])
    if (command !== 'call') {
      expect(sessionEvents(dir).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'aborted', message: `stopped by ${signal}` } })
    }
  })
})

describe('cordage chat at the prompt', { timeout: 60_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s leaves, ends the session and exits 128+signal', async (signal) => {
    const dir = project({ 'tape.json': JSON.stringify({ version: 1, turns: [] }) })
    const cli = start(['chat', '--cassette', 'tape.json'], dir)
    running.push(cli)
    expect(await waitFor(() => cli.stderr().includes('/exit to leave'), 20_000), cli.stderr()).toBe(true)
    cli.child.kill(signal)
    expect(await cli.exited).toEqual({ code: CODES[signal], signal: null })
    expect(sessionEvents(dir).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'aborted', message: `stopped by ${signal}` } })
  })
})

describe('a signal while plugins load', { timeout: 60_000 }, () => {
  it('stops cordage run before its first turn, with session/end and 143', async () => {
    const slow = `import { writeFileSync } from 'node:fs'
export const name = 'slow-start'
export async function apply() {
  writeFileSync('loading', '')
  await new Promise((resolve) => setTimeout(resolve, 1500))
}
`
    const tape = JSON.stringify({ version: 1, turns: [{ text: 'Should never be said.' }] })
    const dir = project({ 'cordage.yml': 'plugins:\n  ./slow.mjs: {}\n', 'slow.mjs': slow, 'tape.json': tape })
    const cli = start(['run', '--cassette', 'tape.json', 'go'], dir)
    running.push(cli)
    expect(await waitFor(() => existsSync(join(dir, 'loading')), 20_000), cli.stderr()).toBe(true)
    cli.child.kill('SIGTERM')
    expect(await cli.exited, cli.stderr()).toEqual({ code: 143, signal: null })
    expect(cli.stdout()).not.toContain('Should never be said.')
    expect(sessionEvents(dir).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'aborted', message: 'stopped by SIGTERM' } })
  })
})
