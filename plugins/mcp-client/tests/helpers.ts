import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from '@cordage/testing'
import type { McpClientOptions } from '../src/index.js'

export const FIXTURE = join(import.meta.dirname, 'fixtures', 'server.mjs')
export const HOSTILE = join(import.meta.dirname, 'fixtures', 'hostile.mjs')

/** A stdio config for the fixture server, with an event log file the server appends to. */
export function stdioFixture(overrides: Partial<McpClientOptions> = {}): { config: McpClientOptions; events: () => string[] } {
  const log = join(mkdtempSync(join(tmpdir(), 'mcp-client-')), 'events.log')
  const config = {
    name: 'fx',
    transport: 'stdio',
    command: process.execPath,
    args: [FIXTURE],
    env: { EVENT_LOG: log },
    reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
    ...overrides,
  } as McpClientOptions
  return { config, events: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) }
}

/** Pids the client logged as connected, in order. */
export function connectedPids(ctx: TestContext): number[] {
  return ctx.logs.flatMap((record) => {
    const match = /connected \(pid (\d+)\)/.exec(record.text)
    return match ? [Number(match[1])] : []
  })
}

/** True while a process with `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Polls `check` until it returns true (or fails after `timeoutMs`). */
export async function until(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Starts a fixture server (`script`) over Streamable HTTP on 127.0.0.1; resolves with its URL, process and event log (removed when it exits). */
export async function httpFixture(port = 0, script = FIXTURE): Promise<{ url: string; child: ChildProcess; events: () => string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-client-'))
  const log = join(dir, 'events.log')
  const child = spawn(process.execPath, [script, '--http'], {
    env: { ...process.env, PORT: String(port), EVENT_LOG: log },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = ''
    child.stdout!.on('data', (chunk) => {
      buffer += chunk
      if (buffer.includes('\n')) resolve(buffer.split('\n')[0]!)
    })
    child.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)))
  })
  return { url, child, events: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) }
}
