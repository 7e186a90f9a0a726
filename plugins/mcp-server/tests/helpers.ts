import { mkdtempSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const SERVE = join(import.meta.dirname, 'fixtures', 'serve.mjs')
export const REPO_ROOT = resolve(import.meta.dirname, '../../..')

/** How to run the fixture server as a child process (workspace packages from source through tsx). */
export function serveCommand(extraArgs: string[] = []): { command: string; args: string[]; cwd: string; env: Record<string, string>; events: () => string[] } {
  const log = join(mkdtempSync(join(tmpdir(), 'mcp-server-')), 'events.log')
  return {
    command: process.execPath,
    args: ['--conditions=cordage-source', '--import', 'tsx', SERVE, ...extraArgs],
    cwd: REPO_ROOT,
    env: { EVENT_LOG: log },
    events: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
  }
}

/** Polls `check` until it returns true (or fails after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
