import { describe, expect, it } from 'vitest'
import { Jobs } from '@cordage/plugin-jobs'
import * as Shell from '@cordage/plugin-shell'
import * as codeMode from '@cordage/plugin-code-mode'
import type { AgentNotice } from '@cordage/services'
import { Subagents } from '../src/index.js'
import { recorder, setup, tempDir, textOf, toolMessages } from './helpers.js'
import { createTestContext, processAlive as alive } from '@cordage/testing'

describe('the subset holds for programs', () => {
  it("a child's run_code cannot call a tool outside its subset", async () => {
    const calls: string[] = []
    const program = 'const a = await tools.alpha({}); let b; try { await tools.beta({}) } catch (error) { b = error.message } return { a: a.ok, b }'
    const { parent } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Program.', tools: ['alpha', 'run_code'] } }] }, { text: 'ok' }],
        routes: {
          'Program.': [{ toolCalls: [{ name: 'run_code', arguments: { code: program } }] }, (request) => ({ text: textOf(request.messages.at(-1) as never) })],
        },
      },
      {},
      async (ctx) => {
        ctx.tools.register(recorder('alpha', calls))
        ctx.tools.register(recorder('beta', calls))
        await ctx.plugin(codeMode, {})
      },
    )
    await parent.run('go')
    const text = textOf(toolMessages(parent, 'subagent')[0])
    expect(text).toContain('"a": true')
    expect(text).toMatch(/tool \\?"beta\\?" is not available to subagent/)
    expect(calls.map((call) => call.split(':')[0])).toEqual(['alpha'])
  })
})

describe('background subagents', () => {
  it('return a job handle; the job holds the answer and the parent gets a notice', async () => {
    const notices: AgentNotice[] = []
    const { parent, ctx } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Later.', background: true } }] }, { text: 'started' }],
        routes: { 'Later.': [{ text: 'background answer', delayMs: 100 }] },
      },
      {},
      async (ctx) => {
        await ctx.plugin(Jobs, {})
      },
    )
    ctx.on('agent/notice', (notice) => void notices.push(notice))
    await parent.run('go')
    expect(textOf(toolMessages(parent, 'subagent')[0])).toMatch(/^started background subagent job job_\d+$/)
    const jobId = textOf(toolMessages(parent, 'subagent')[0]).split(' ').at(-1)!
    await ctx.jobs.wait(jobId, 0, 10_000)
    await expect.poll(() => notices.length, { timeout: 15_000, interval: 5 }).toBe(1)
    expect(ctx.jobs.get(jobId)).toMatchObject({ kind: 'subagent', state: 'exited', exitCode: 0 })
    expect(ctx.jobs.read(jobId).text).toBe('background answer')
    expect(notices.map((notice) => notice.text)).toEqual([expect.stringContaining(`Background job ${jobId} (subagent: Later.) exited with code 0`)])
  })

  it("job_kill stops the child's model stream and the processes its tools started", async () => {
    const dir = await tempDir()
    const pidFile = `${dir}/pid`
    const { parent, ctx, children } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Sleep.', background: true } }] }, { text: 'started' }],
        routes: { 'Sleep.': [{ toolCalls: [{ name: 'bash', arguments: { command: `sleep 1000 & echo $! > ${pidFile}; wait` } }] }, { text: 'never' }] },
      },
      {},
      async (ctx) => {
        await ctx.plugin(Jobs, {})
        await ctx.plugin(Shell, { root: dir })
      },
    )
    await parent.run('go')
    const jobId = textOf(toolMessages(parent, 'subagent')[0]).split(' ').at(-1)!
    const { readFile } = await import('node:fs/promises')
    let pid = 0
    for (let attempt = 0; attempt < 200 && !pid; attempt++) {
      pid = Number(await readFile(pidFile, 'utf8').catch(() => '')) || 0
      if (!pid) await new Promise((resolve) => setTimeout(resolve, 25))
    }
    expect(alive(pid)).toBe(true)
    // The job belongs to the parent agent that started it.
    const killed = await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: jobId }, agent: parent.name })
    expect(killed, JSON.stringify(killed.content)).toMatchObject({ isError: false })
    expect(ctx.jobs.get(jobId)?.state).toBe('killed')
    expect(alive(pid)).toBe(false)
    expect(children.filter((event) => event.type === 'end').map((event) => event.stopReason)).toEqual(['aborted'])
  })

  it('without the jobs service, background fails clearly', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(Subagents, { persist: false })
    const result = await ctx.tools.execute({ name: 'subagent', arguments: { prompt: 'x', background: true } })
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'JOBS_UNAVAILABLE' } } })
  })
})

describe('config', () => {
  it('offers named profiles with their system prompt and tools', async () => {
    const calls: string[] = []
    const { parent, model } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Review.', agent: 'reviewer' } }] }, { text: 'ok' }],
        routes: { 'Review.': [{ text: 'looks fine' }] },
      },
      { agents: { reviewer: { description: 'Reviews code.', system: 'You review code.', tools: ['alpha'] } } },
      (ctx) => {
        ctx.tools.register(recorder('alpha', calls))
        ctx.tools.register(recorder('beta', calls))
      },
    )
    await parent.run('go')
    expect(model.requests[0]!.tools.find((tool) => tool.name === 'subagent')?.description).toContain('- reviewer: Reviews code.')
    const child = model.requests.find((request) => request.messages.some((message) => message.content === 'Review.'))!
    expect(child.messages[0]).toEqual({ role: 'system', content: 'You review code.' })
    expect(child.tools.map((tool) => tool.name)).toEqual(['alpha'])
  })

  it('rejects a profile that lists structured_output', async () => {
    const ctx = await createTestContext()
    await expect(ctx.plugin(Subagents, { agents: { bad: { description: 'x', tools: ['structured_output'] } } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    })
  })
})
