import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import type { ConfigInput } from '@cordage/core'
import { createTestContext } from '@cordage/testing'
import { Jobs } from '@cordage/plugin-jobs'
import * as shell from '../src/index.js'

const created: string[] = []
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh real temp directory (resolved, so comparisons with `pwd` hold), removed after the file's tests. */
export function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'cordage-shell-')))
  created.push(dir)
  return dir
}

/** Whether `pid` is a live process (zombies count as dead). */
export { processAlive as alive } from '@cordage/testing'

/** Polls until `file` holds a pid, then returns it. */
export async function readPid(file: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const pid = Number(readFileSync(file, 'utf8').trim())
      if (pid > 0) return pid
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  throw new Error(`no pid in ${file}`)
}

export { valueOf as value } from '@cordage/testing'

/** A context with the registry, optionally the jobs service, and the shell plugin rooted at a temp dir. */
export async function setup(options: { jobs?: boolean; config?: ConfigInput<shell.Config> } = {}) {
  const root = tempDir()
  const ctx = await createTestContext()
  const jobsFiber = options.jobs === false ? undefined : await ctx.plugin(Jobs, {})
  const fiber = await ctx.plugin(shell, { root, ...options.config })
  const bash = (args: Record<string, unknown>, signal?: AbortSignal) => ctx.tools.execute({ name: 'bash', arguments: args, signal })
  return { ctx, root, fiber, jobsFiber, bash }
}
