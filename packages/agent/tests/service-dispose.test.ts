import { readdirSync, readlinkSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { AgentService, loadSession } from '../src/index.js'
import { tempDir } from './helpers.js'

/** Paths this process holds open under `dir` (Linux). */
function openUnder(dir: string): string[] {
  const open: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target.startsWith(dir)) open.push(target)
    } catch {
      // Closed while listing.
    }
  }
  return open
}

describe('unloading the agent plugin', () => {
  it.runIf(process.platform === 'linux')('closes the sessions it opened that were left open, and leaves closed ones alone', async () => {
    const cwd = await tempDir()
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'one' }, { text: 'two' }] })
    const fiber = await ctx.plugin(AgentService, { cwd })
    const closed = ctx.get('agent')!.create()
    await closed.run('hello')
    await closed.session!.close({ reason: 'completed' })
    const left = ctx.get('agent')!.create()
    await left.run('hello')
    expect(openUnder(cwd)).toEqual([left.session!.file])

    await fiber.dispose()
    expect(openUnder(cwd)).toEqual([])
    expect(left.session!.closed).toBe(true)
    const ends = (file: string) => loadSession(file).events.filter((event) => event.type === 'session/end').map((event) => event.data)
    expect(ends(left.session!.file)).toEqual([{ reason: 'unloaded' }])
    expect(ends(closed.session!.file)).toEqual([{ reason: 'completed' }])
  })
})
