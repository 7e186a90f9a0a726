import { describe, expect, it } from 'vitest'
import { Agent } from '@cordage/agent'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, valueOf, type ScriptStep, type TestContext } from '@cordage/testing'
import { Subagents } from '@cordage/plugin-subagent'
import * as codeMode from '@cordage/plugin-code-mode'
import type { ChildRunEvent } from '@cordage/services'
import * as Workflow from '../src/index.js'

/** Workflow on subagents with a run budget of `children`; counts child starts. */
async function setup(children: number, script: { turns?: ScriptStep[]; routes: Record<string, ScriptStep[]> }) {
  const ctx = await createTestContext()
  await ctx.plugin(ScriptedModel, { turns: script.turns ?? [], routes: script.routes })
  await ctx.plugin(Subagents, { persist: false, maxConcurrent: 16, budget: { children } })
  await ctx.plugin(codeMode, {})
  await ctx.plugin(Workflow, { maxConcurrentAgents: 16 })
  const started: ChildRunEvent[] = []
  ctx.on('agent/child', (event) => void (event.type === 'start' && started.push(event)))
  return { ctx, started }
}

const answers = (count: number): ScriptStep[] => Array.from({ length: count }, () => ({ text: 'ok' }))
const run = (ctx: TestContext, name: string, args: Record<string, unknown>): Promise<ToolExecutionResult> => ctx.tools.execute({ name, arguments: args })
const settled = (count: number) =>
  `const all = await Promise.allSettled(Array.from({ length: ${count} }, () => agents.run({ prompt: 'Leaf.' })));` +
  `return { ok: all.filter((each) => each.status === 'fulfilled').length, refused: [...new Set(all.filter((each) => each.status === 'rejected').map((each) => each.reason.message.split(';')[0]))] }`

describe('workflow under the run budget', () => {
  it('a fan-out wider than the budget starts only what the budget allows; the rest fail with its reason', async () => {
    const { ctx, started } = await setup(3, { routes: { 'Leaf.': answers(20) } })
    const result = await run(ctx, 'workflow', { code: settled(10) })
    expect(result).toMatchObject({ isError: false, value: { agentsStarted: 10, result: { ok: 3 } } })
    expect((valueOf(result) as { result: { refused: string[] } }).result.refused).toEqual([
      'this run has already started 3 subagent runs, its whole budget (budget.children 3 per run, counted across nested subagents, workflows and programs)',
    ])
    expect(started).toHaveLength(3)
  })

  it('workflows called from one program share that call’s budget', async () => {
    const { ctx, started } = await setup(3, { routes: { 'Leaf.': answers(20) } })
    const twice = `const first = await tools.workflow({ code: ${JSON.stringify(settled(2))} }); const second = await tools.workflow({ code: ${JSON.stringify(settled(2))} }); return [first.result.ok, second.result.ok]`
    const result = await run(ctx, 'run_code', { code: twice })
    expect(result).toMatchObject({ isError: false, value: { result: [2, 1] } })
    expect(started).toHaveLength(3)
  })

  it('a workflow nested in a workflow draws on the budget of the outermost call', async () => {
    const { ctx, started } = await setup(2, { routes: { 'Leaf.': answers(20) } })
    const nested = `const mine = await Promise.allSettled([agents.run({ prompt: 'Leaf.' }), agents.run({ prompt: 'Leaf.' })]); const inner = await tools.workflow({ code: ${JSON.stringify(settled(2))} }); return inner.result.ok`
    const result = await run(ctx, 'run_code', { code: `return (await tools.workflow({ code: ${JSON.stringify(nested)} })).result` })
    expect(result).toMatchObject({ isError: false, value: { result: 0 } })
    expect(started).toHaveLength(2)
  })

  it("a workflow's agents and the agent's own subagents draw on one budget per root run", async () => {
    const { ctx, started } = await setup(2, {
      turns: [
        { toolCalls: [{ name: 'workflow', arguments: { code: settled(2) } }] },
        { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Leaf.' } }] },
        { text: 'done' },
      ],
      routes: { 'Leaf.': answers(20) },
    })
    const results: Array<[string, string | undefined]> = []
    ctx.on('tools/result', (exec, result) => void (exec.agent === 'root' && results.push([exec.name, result.isError ? result.error.info?.code : undefined])))
    await new Agent(ctx, { agent: 'root' }).run('go')
    expect(results).toEqual([
      ['workflow', undefined],
      ['subagent', 'RUN_BUDGET_EXCEEDED'],
    ])
    expect(started).toHaveLength(2)
  })

  it('ralph stops at the budget, naming the round and the reason', async () => {
    const report = { toolCalls: [{ name: 'structured_output', arguments: { status: 'continue', summary: 'more to do' } }] }
    const { ctx, started } = await setup(2, { routes: { 'Loop.': Array.from({ length: 10 }, () => report) } })
    const result = await run(ctx, 'ralph', { prompt: 'Loop.', maxRounds: 5 })
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'RALPH_ROUND_FAILED' } } })
    expect(contentText(result.content)).toMatch(/^Error: ralph round 3 failed: this run has already started 2 subagent runs/)
    expect(started).toHaveLength(2)
  })
})

describe('workflows that outlive or nest themselves', () => {
  async function plain(routes: Record<string, ScriptStep[]>, config: Partial<Workflow.Config> = {}) {
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [], routes })
    await ctx.plugin(Subagents, { persist: false, maxConcurrent: 16 })
    await ctx.plugin(codeMode, {})
    const fiber = await ctx.plugin(Workflow, config)
    const events: ChildRunEvent[] = []
    ctx.on('agent/child', (event) => void events.push(event))
    return { ctx, fiber, events }
  }

  it('unloading the plugin aborts a run in flight: its child ends aborted, no further child starts, and the call fails ABORTED', async () => {
    const { ctx, fiber, events } = await plain({ 'Wait.': [{ text: 'late', delayMs: 5_000 }], 'Next.': [{ text: 'next' }] })
    let disposed: Promise<unknown> | undefined
    ctx.on('agent/child', (event) => void (event.type === 'start' && event.label === 'Wait.' && (disposed = fiber.dispose())))
    const result = await run(ctx, 'workflow', { code: 'const a = await agents.run({ prompt: "Wait." }); return [a, await agents.run({ prompt: "Next." })]' })
    await disposed
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'ABORTED' } } })
    expect(events.map((event) => [event.type, event.label, event.stopReason])).toEqual([
      ['start', 'Wait.', undefined],
      ['end', 'Wait.', 'aborted'],
    ])
    expect(ctx.tools.get('workflow')).toBeUndefined()
  })

  it('unloading the plugin stops a ralph loop between rounds', async () => {
    const report = { toolCalls: [{ name: 'structured_output', arguments: { status: 'continue', summary: 'more' } }] }
    const { ctx, fiber, events } = await plain({ 'Loop.': Array.from({ length: 10 }, () => ({ ...report, delayMs: 50 })) })
    let disposed: Promise<unknown> | undefined
    ctx.on('agent/child', (event) => void (event.type === 'start' && (disposed ??= fiber.dispose())))
    const result = await run(ctx, 'ralph', { prompt: 'Loop.', maxRounds: 5 })
    await disposed
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'ABORTED' } } })
    expect(events.filter((event) => event.type === 'start')).toHaveLength(1)
  })

  it('a program that calls workflow recursively stops at maxDepth with a coded reason', async () => {
    const { ctx } = await plain({}, { maxDepth: 3 })
    const calls: Array<string | undefined> = []
    ctx.on('tools/result', (exec, result) => void (exec.name === 'workflow' && calls.push(result.isError ? result.error.info?.code : 'OK')))
    // The program starts a workflow running its own text, for ever.
    const self = "const S = X; await tools.workflow({ code: S.replace('X', JSON.stringify(S)) }); return 'unreachable'"
    const result = await run(ctx, 'workflow', { code: self.replace('X', JSON.stringify(self)) })
    expect(result.isError).toBe(true)
    expect(contentText(result.content)).toContain('workflow depth 4 exceeds maxDepth 3')
    expect(calls).toEqual(['WORKFLOW_DEPTH', 'CODE_RUN_FAILED', 'CODE_RUN_FAILED', 'CODE_RUN_FAILED'])
  })
})
