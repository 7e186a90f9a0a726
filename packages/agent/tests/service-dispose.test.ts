import { describe, expect, it } from 'vitest'
import { createTestContext, openFilesUnder, ScriptedModel } from '@cordage/testing'
import { AgentService, loadSession } from '../src/index.js'
import { tempDir } from './helpers.js'

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
    expect(openFilesUnder(cwd)).toEqual([left.session!.file])

    await fiber.dispose()
    expect(openFilesUnder(cwd)).toEqual([])
    expect(left.session!.closed).toBe(true)
    const ends = (file: string) =>
      loadSession(file)
        .events.filter((event) => event.type === 'session/end')
        .map((event) => event.data)
    expect(ends(left.session!.file)).toEqual([{ reason: 'unloaded' }])
    expect(ends(closed.session!.file)).toEqual([{ reason: 'completed' }])
  })

  it('aborts a run in progress and waits for it before closing its session', async () => {
    const cwd = await tempDir()
    const ctx = await createTestContext()
    let markStarted!: () => void
    const started = new Promise<void>((resolve) => (markStarted = resolve))
    let settledAfterAbort = false
    await ctx.plugin({
      name: 'slow-tools',
      inject: ['tools'],
      apply: (scoped) =>
        void scoped.tools.register({
          name: 'nap',
          description: 'Waits until cancelled.',
          parameters: { type: 'object' },
          output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: 'rested' }] },
          execute: (_args, exec) =>
            new Promise((_resolve, reject) => {
              markStarted()
              exec.signal.addEventListener(
                'abort',
                () =>
                  setTimeout(() => {
                    settledAfterAbort = true
                    reject(exec.signal.reason)
                  }, 20),
                { once: true },
              )
            }),
        }),
    })
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'nap' }, { name: 'nap' }] }, { text: 'never reached' }] })
    const fiber = await ctx.plugin(AgentService, { cwd })
    const agent = ctx.get('agent')!.create()
    const running = agent.run('take a long nap')
    await started
    await fiber.dispose()
    // Disposal waited for the body to stop before closing the session.
    expect(settledAfterAbort).toBe(true)
    const result = await running
    expect(result.stopReason).toBe('aborted')
    const events = loadSession(agent.session!.file).events
    const codes = events.filter((event) => event.type === 'tool/result').map((event) => (event.data as any).error?.code)
    expect(codes).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH'])
    expect(events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'unloaded' } })
  })
})
