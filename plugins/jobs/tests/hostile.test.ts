import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Fiber } from 'cordis'
import Schema from 'schemastery'
import { Agent } from '@cordage/agent'
import { contentText, defineTool, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import * as codeMode from '@cordage/plugin-code-mode'
import * as Shell from '@cordage/plugin-shell'
import { Subagents } from '@cordage/plugin-subagent'
import { Jobs } from '../src/service.js'

interface Seen {
  agent: string | undefined
  name: string
  nested: boolean
  code: string | undefined
  text: string
  value: unknown
}

const services: Fiber[] = []
const dirs: string[] = []
afterEach(async () => {
  // Unloading the service kills every job still running (their `sleep` processes included).
  for (const fiber of services.splice(0)) await fiber.dispose()
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A context with jobs, shell, Code Mode, subagents and a scripted model; every tool result is recorded. */
async function setup(script: { turns: ScriptStep[]; routes?: Record<string, ScriptStep[]> }) {
  const dir = await mkdtemp(join(tmpdir(), 'jobs-hostile-'))
  dirs.push(dir)
  const ctx = await createTestContext()
  services.push(await ctx.plugin(Jobs, {}))
  await ctx.plugin(Shell, { root: dir })
  await ctx.plugin(codeMode, {})
  await ctx.plugin(ScriptedModel, script)
  await ctx.plugin(Subagents, { persist: false })
  const seen: Seen[] = []
  ctx.on('tools/result', (exec, result: ToolExecutionResult) => {
    seen.push({
      agent: exec.agent,
      name: exec.name,
      nested: exec.parent !== undefined,
      code: result.isError ? result.error.info?.code : undefined,
      text: contentText(result.content),
      value: result.isError ? undefined : result.value,
    })
  })
  return { ctx, seen, model: ctx.get('model') as unknown as ScriptedModel }
}

const sleep = (seconds: number) => ({ name: 'bash', arguments: { command: `sleep ${seconds}`, run_in_background: true } })
const listed = (entry: Seen | undefined) => (entry?.value as { jobs: Array<{ id: string }> } | undefined)?.jobs.map((job) => job.id)

describe('jobs belong to the agent that started them', () => {
  it.each([
    ['a named parent', 'parent'],
    ['a parent without an id', undefined],
  ])("a child cannot kill, read or list %s's background job, directly or from a program", async (_label, parentId) => {
    const program = 'try { await tools.job_kill({ job_id: "job_1" }); return "killed" } catch (error) { return error.message }'
    const { ctx, seen } = await setup({
      turns: [
        { toolCalls: [sleep(1000)] },
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Attack.', tools: ['job_kill', 'job_output', 'job_list', 'run_code'] } }] },
        { toolCalls: [{ name: 'job_kill', arguments: { job_id: 'job_1' } }] },
        { text: 'done' },
      ],
      routes: {
        'Attack.': [
          { toolCalls: [{ name: 'job_kill', arguments: { job_id: 'job_1' } }] },
          { toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1' } }] },
          { toolCalls: [{ name: 'job_list', arguments: {} }] },
          { toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_404' } }] },
          { toolCalls: [{ name: 'run_code', arguments: { code: program } }] },
          { text: 'tried' },
        ],
      },
    })
    const parent = new Agent(ctx, parentId === undefined ? {} : { agent: parentId })
    let stateWhileChildRan: string | undefined
    ctx.on('agent/child', (event) => void (event.type === 'end' && (stateWhileChildRan = ctx.jobs.get('job_1')?.state)))
    await parent.run('go')

    const child = seen.filter((entry) => entry.agent !== parentId && entry.name !== 'subagent')
    expect(child.map((entry) => [entry.name, entry.code])).toEqual([
      ['job_kill', 'FOREIGN_JOB'],
      ['job_output', 'FOREIGN_JOB'],
      ['job_list', undefined],
      ['job_output', 'UNKNOWN_JOB'],
      ['job_kill', 'FOREIGN_JOB'],
      ['run_code', undefined],
    ])
    expect(child[0]!.text).toMatch(/^Error: job "job_1" belongs to another agent/)
    expect(listed(child[2])).toEqual([])
    // Another agent's job ids are not even listed as known.
    expect(child[3]!.text).toContain('known jobs: (none)')
    expect(child[4]!.nested).toBe(true)
    expect(stateWhileChildRan).toBe('running')
    // The parent still owns it and stops it.
    const parentKill = seen.find((entry) => entry.agent === parentId && entry.name === 'job_kill')
    expect(parentKill).toMatchObject({ code: undefined, value: { killed: true } })
  })

  it('a parent sees and stops what its children and grandchildren started; a sibling sees none of it', async () => {
    const { ctx, seen } = await setup({
      turns: [
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Child A.', tools: ['bash', 'subagent', 'job_list'] } }] },
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Child B.', tools: ['job_list', 'job_kill'] } }] },
        { toolCalls: [{ name: 'job_list', arguments: {} }] },
        { toolCalls: [{ name: 'job_kill', arguments: { job_id: 'job_2' } }] },
        { text: 'done' },
      ],
      routes: {
        'Child A.': [
          { toolCalls: [sleep(1000)] },
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Grandchild.', tools: ['bash'] } }] },
          { toolCalls: [{ name: 'job_list', arguments: {} }] },
          { text: 'a done' },
        ],
        'Grandchild.': [{ toolCalls: [sleep(1001)] }, { text: 'g done' }],
        'Child B.': [
          { toolCalls: [{ name: 'job_list', arguments: {} }] },
          { toolCalls: [{ name: 'job_kill', arguments: { job_id: 'job_1' } }] },
          { text: 'b done' },
        ],
      },
    })
    await new Agent(ctx, { agent: 'parent' }).run('go')
    const lists = seen.filter((entry) => entry.name === 'job_list')
    expect(lists.map((entry) => [entry.agent === 'parent' ? 'parent' : 'child', listed(entry)])).toEqual([
      ['child', ['job_1', 'job_2']], // A: its own job and its child's
      ['child', []], // B: nothing of its sibling's
      ['parent', ['job_1', 'job_2']], // the parent, after both children ended
    ])
    const kills = seen.filter((entry) => entry.name === 'job_kill')
    expect(kills.map((entry) => [entry.agent === 'parent' ? 'parent' : 'child', entry.code])).toEqual([
      ['child', 'FOREIGN_JOB'],
      ['parent', undefined],
    ])
    expect(ctx.jobs.get('job_1')?.state).toBe('running')
    expect(ctx.jobs.get('job_2')?.state).toBe('killed')
  })

  it("a background subagent is its caller's job: another child of the same parent cannot kill it", async () => {
    const { ctx, seen } = await setup({
      turns: [
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Slowly.', background: true } }] },
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Attack.', tools: ['job_kill'] } }] },
        { text: 'done' },
      ],
      routes: {
        'Slowly.': [{ text: 'never', delayMs: 60_000 }],
        'Attack.': [{ toolCalls: [{ name: 'job_kill', arguments: { job_id: 'job_1' } }] }, { text: 'tried' }],
      },
    })
    await new Agent(ctx, { agent: 'parent' }).run('go')
    expect(seen.find((entry) => entry.name === 'job_kill')?.code).toBe('FOREIGN_JOB')
    expect(ctx.jobs.get('job_1')).toMatchObject({ kind: 'subagent', state: 'running' })
    const kill = await ctx.tools.execute({ name: 'job_kill', arguments: { job_id: 'job_1' }, agent: 'parent' })
    expect(kill).toMatchObject({ isError: false, value: { killed: true } })
  })

  it('a job no agent started is closed to child runs and open to top-level agents', async () => {
    const { ctx, seen } = await setup({
      turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Attack.', tools: ['job_output'] } }] }, { text: 'done' }],
      routes: { 'Attack.': [{ toolCalls: [{ name: 'job_output', arguments: { job_id: 'job_1' } }] }, { text: 'tried' }] },
    })
    const job = ctx.jobs.start({ kind: 'test', title: 'host work' })
    job.write('host output')
    await new Agent(ctx, { agent: 'parent' }).run('go')
    expect(seen.find((entry) => entry.name === 'job_output')?.code).toBe('FOREIGN_JOB')
    const read = await ctx.tools.execute({ name: 'job_output', arguments: { job_id: job.id }, agent: 'another-top-level-agent' })
    expect(read).toMatchObject({ isError: false, value: { output: 'host output' } })
    job.exit({ exitCode: 0 })
  })

  it("a job's end is told to the agent that started it and its ancestors, not to its children", async () => {
    let parentJob: ReturnType<TestContext['jobs']['start']> | undefined
    const { ctx, model } = await setup({
      turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Listen.', tools: ['end_parent_job', 'end_own_job'] } }] }, { text: 'done' }],
      routes: { 'Listen.': [{ toolCalls: [{ name: 'end_parent_job' }] }, { toolCalls: [{ name: 'end_own_job' }] }, { text: 'ok' }] },
    })
    const tool = (name: string, end: (agent: string | undefined) => void) =>
      defineTool({
        name,
        description: 'Ends a job.',
        parameters: Schema.object({}),
        output: { schema: Schema.object({}), render: () => [{ type: 'text', text: 'ended' }] },
        execute: (_args, exec) => (end(exec.agent), {}),
      })
    ctx.tools.register(tool('end_parent_job', () => parentJob!.exit({ exitCode: 0 })))
    ctx.tools.register(tool('end_own_job', (agent) => ctx.jobs.start({ kind: 'test', title: 'child work', agent }).exit({ exitCode: 0 })))
    parentJob = ctx.jobs.start({ kind: 'test', title: 'parent work', agent: 'parent' })
    await new Agent(ctx, { agent: 'parent' }).run('go')
    const noticed = (request: (typeof model.requests)[number]) =>
      request.messages.flatMap((message) =>
        message.role === 'user' ? [...message.content.matchAll(/Background job (job_\d+)/g)].map((match) => match[1]) : [],
      )
    const opening = (request: (typeof model.requests)[number]) => request.messages.find((message) => message.role === 'user')?.content
    // The child never hears of its parent's job; it hears of its own.
    expect(model.requests.filter((request) => opening(request) === 'Listen.').map(noticed)).toEqual([[], [], ['job_2']])
    // The parent hears of both: its own and the one its child started.
    expect(noticed(model.requests.filter((request) => opening(request) === 'go').at(-1)!)).toEqual(['job_1', 'job_2'])
  })
})
