import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe } from 'vitest'
import type { ConfigInput, ToolExecutionResult } from '@cordage/core'
import { createTestContext, valueOf } from '@cordage/testing'
import type { AgentNotice } from '@cordage/services'
import * as terminal from '../src/index.js'
import { ptyProblem } from '../src/pty.js'

const missing = ptyProblem()
if (missing) console.warn(`terminal tests skipped: node-pty cannot be loaded here (${missing}); CI builds its addon (npm_config_nodedir=/usr)`)

/** `describe`, skipped where node-pty cannot be loaded (the reason is printed once, above). */
export const describeWithPty = missing === undefined ? describe : describe.skip

const created: string[] = []
const fibers: Array<{ dispose(): unknown }> = []
afterEach(async () => {
  for (const fiber of fibers.splice(0)) await fiber.dispose()
})
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh real temp directory (resolved), removed after the file's tests. */
export function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'cordage-terminal-')))
  created.push(dir)
  return dir
}

/** Live (non-zombie) processes whose session id is `sid`, from `ps`, independent of the plugin's own scan. */
export function sessionProcesses(sid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,sid=,stat='], { encoding: 'utf8' })
  return table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => Number(fields[1]) === sid && !fields[2]?.startsWith('Z'))
    .map((fields) => Number(fields[0]))
}

/** Whether `pid` is a live process (zombies count as dead). */
export { processAlive as alive } from '@cordage/testing'

export { valueOf as value } from '@cordage/testing'

export { textOf as text } from '@cordage/testing'

export function code(result: ToolExecutionResult): string | undefined {
  return result.isError ? result.error.info?.code : undefined
}

/** Polls `check` until it is true or `ms` passed; returns the last answer. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return true
}

/** A context with the registry and the terminal plugin rooted at a temp dir; disposed after each test. */
export async function setup(config: ConfigInput<terminal.Config> = {}) {
  const root = tempDir()
  const ctx = await createTestContext()
  const fiber = await ctx.plugin(terminal, { root, ...config })
  fibers.push(fiber)
  const notices: AgentNotice[] = []
  ctx.on('agent/notice', (notice) => void notices.push(notice))
  const call = (name: string, args: Record<string, unknown>, extra: { agent?: string; signal?: AbortSignal } = {}) =>
    ctx.tools.execute({ name: `terminal_${name}`, arguments: args, ...extra })
  /** Opens a session and waits for its prompt (or first screen) to settle. */
  const open = async (args: Record<string, unknown> = {}) => valueOf(await call('open', args))
  return { ctx, root, fiber, call, open, notices }
}
