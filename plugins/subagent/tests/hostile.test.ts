import { describe, expect, it } from 'vitest'
import { Agent } from '@cordage/agent'
import { listenerCount } from '@cordage/registry'
import { contentText, type ConfigInput, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import * as codeMode from '@cordage/plugin-code-mode'
import { Jobs } from '@cordage/plugin-jobs'
import * as Workflow from '@cordage/plugin-workflow'
import type { ChildRunEvent } from '@cordage/services'
import { Subagents, type Config } from '../src/index.js'

interface Seen {
  agent: string | undefined
  name: string
  code: string | undefined
  text: string
}

/** Subagents (no session files), Code Mode, workflow and jobs around a scripted model; records every result and child start. */
async function setup(script: { turns: ScriptStep[]; routes?: Record<string, ScriptStep[]> }, config: ConfigInput<Config> = {}) {
  const ctx = await createTestContext()
  await ctx.plugin(codeMode, {})
  await ctx.plugin(Jobs, {})
  await ctx.plugin(ScriptedModel, script)
  await ctx.plugin(Subagents, { persist: false, ...config })
  await ctx.plugin(Workflow, {})
  const seen: Seen[] = []
  ctx.on('tools/result', (exec, result: ToolExecutionResult) => {
    seen.push({ agent: exec.agent, name: exec.name, code: result.isError ? result.error.info?.code : undefined, text: contentText(result.content) })
  })
  const started: ChildRunEvent[] = []
  ctx.on('agent/child', (event) => void (event.type === 'start' && started.push(event)))
  return { ctx, seen, started }
}

/** A program that starts subagents one after another until one fails, and reports how far it got. */
const serial = (count: number) =>
  `let done = 0; try { for (let i = 0; i < ${count}; i++) { await tools.subagent({ prompt: 'Task.' }); done++ } return { done } } catch (error) { return { done, error: error.message } }`

const answers = (count: number): ScriptStep[] => Array.from({ length: count }, () => ({ text: 'ok' }))

function programResult(seen: Seen[], index = 0): { done: number; error?: string } {
  const run = seen.filter((entry) => entry.name === 'run_code')[index]!
  return JSON.parse(run.text.slice(run.text.indexOf('{'))) as { done: number; error?: string }
}

describe('the run budget', () => {
  it('stops a program that starts children one after another at the budget, with a coded failure the model reads', async () => {
    const { ctx, seen, started } = await setup(
      { turns: [{ toolCalls: [{ name: 'run_code', arguments: { code: serial(30) } }] }, { text: 'done' }], routes: { 'Task.': answers(30) } },
      { budget: { children: 5 } },
    )
    await new Agent(ctx, { agent: 'root' }).run('go')
    expect(started).toHaveLength(5)
    expect(programResult(seen)).toMatchObject({ done: 5 })
    const refused = seen.filter((entry) => entry.name === 'subagent' && entry.code !== undefined)
    expect(refused.map((entry) => entry.code)).toEqual(['RUN_BUDGET_EXCEEDED'])
    expect(refused[0]!.text).toMatchInlineSnapshot(
      `"Error: this run has already started 5 subagent runs, its whole budget (budget.children 5 per run, counted across nested subagents, workflows and programs); finish with what you have, or tell the user the budget was reached"`,
    )
  })

  it('counts children across nesting, workflows and background runs, for the whole root run', async () => {
    const fanOut = 'return await Promise.all([agents.run({ prompt: "Leaf." }), agents.run({ prompt: "Leaf." })])'
    const { ctx, seen, started } = await setup(
      {
        turns: [
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Lead.', tools: ['workflow', 'subagent'] } }] },
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Leaf.', background: true } }] },
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Leaf.' } }] },
          { text: 'done' },
        ],
        routes: {
          // Lead (1) runs a workflow of two (3), then a nested subagent (4); the root's background child is 5.
          'Lead.': [
            { toolCalls: [{ name: 'workflow', arguments: { code: fanOut } }] },
            { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Leaf.' } }] },
            { text: 'lead done' },
          ],
          'Leaf.': answers(10),
        },
      },
      { budget: { children: 5 } },
    )
    await new Agent(ctx, { agent: 'root' }).run('go')
    expect(started.map((event) => [event.tool, event.depth])).toEqual([
      ['subagent', 1],
      ['workflow', 2],
      ['workflow', 2],
      ['subagent', 2],
      ['subagent', 1],
    ])
    // The sixth, a plain foreground call of the root, is refused.
    const rootCalls = seen.filter((entry) => entry.agent === 'root' && entry.name === 'subagent')
    expect(rootCalls.map((entry) => entry.code)).toEqual([undefined, undefined, 'RUN_BUDGET_EXCEEDED'])
  })

  it('charges model tokens of the root and its children: a child over the budget is stopped, and no child starts after', async () => {
    const usage = { inputTokens: 400, outputTokens: 100 }
    const step = (code: string): ScriptStep => ({ toolCalls: [{ name: 'run_code', arguments: { code } }], usage })
    const { ctx, seen, started } = await setup(
      {
        turns: [
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Work.' } }], usage },
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Work.' } }], usage },
          { text: 'done', usage },
        ],
        // Root 500, then the child's requests: 1 000, 1 500, 2 000 (within), 2 500 (over: the child stops).
        routes: { 'Work.': [step('return 1'), step('return 2'), step('return 3'), step('return 4'), { text: 'work done', usage }] },
      },
      { budget: { tokens: 2000 } },
    )
    const result = await new Agent(ctx, { agent: 'root' }).run('go')
    expect(result.stopReason).toBe('completed')
    const rootCalls = seen.filter((entry) => entry.agent === 'root' && entry.name === 'subagent')
    expect(rootCalls.map((entry) => entry.code)).toEqual(['RUN_BUDGET_EXCEEDED', 'RUN_BUDGET_EXCEEDED'])
    expect(rootCalls[0]!.text).toContain('used 2500 tokens, its whole budget (budget.tokens 2000 per run')
    expect(started).toHaveLength(1)
    // The call the fourth request proposed is never run (the child is stopped first), and no fifth request is made.
    const childPrograms = seen.filter((entry) => entry.name === 'run_code' && entry.agent !== 'root')
    expect(childPrograms.map((entry) => entry.code)).toEqual([undefined, undefined, undefined])
  })

  it('charges model turns, with or without reported usage: budget.turns counts the root run and its children', async () => {
    const { ctx, seen } = await setup(
      {
        turns: [
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Work.' } }] },
          { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Work.' } }] },
          { text: 'done' },
        ],
        routes: { 'Work.': [{ toolCalls: [{ name: 'run_code', arguments: { code: 'return 1' } }] }, { text: 'ok' }] },
      },
      { budget: { turns: 3 } },
    )
    await new Agent(ctx, { agent: 'root' }).run('go')
    // Root 1, child 2 and 3, root 4: over, so the root's second child is refused.
    const rootCalls = seen.filter((entry) => entry.agent === 'root' && entry.name === 'subagent')
    expect(rootCalls.map((entry) => entry.code)).toEqual([undefined, 'RUN_BUDGET_EXCEEDED'])
    expect(rootCalls[1]!.text).toContain('used 4 model turns, its whole budget (budget.turns 3 per run')
  })

  it('gives each root run a fresh budget: the next run of the same agent may start children again', async () => {
    const { ctx, seen } = await setup(
      {
        turns: [
          { toolCalls: [{ name: 'run_code', arguments: { code: serial(3) } }] },
          { text: 'first done' },
          { toolCalls: [{ name: 'run_code', arguments: { code: serial(3) } }] },
          { text: 'second done' },
        ],
        routes: { 'Task.': answers(10) },
      },
      { budget: { children: 2 } },
    )
    const agent = new Agent(ctx, { agent: 'root' })
    await agent.run('first')
    await agent.run('second')
    expect([programResult(seen, 0).done, programResult(seen, 1).done]).toEqual([2, 2])
  })

  it('gives a caller outside any agent run (an MCP client, a host) one budget per outermost call', async () => {
    const { ctx, seen } = await setup({ turns: [], routes: { 'Task.': answers(10) } }, { budget: { children: 2 } })
    for (let call = 0; call < 2; call++) await ctx.tools.execute({ name: 'run_code', arguments: { code: serial(3) } })
    expect([programResult(seen, 0), programResult(seen, 1)]).toEqual([
      { done: 2, error: expect.stringContaining('started 2 subagent runs') },
      { done: 2, error: expect.stringContaining('started 2 subagent runs') },
    ])
  })

  it('unloading the plugin takes its run listener off the context', async () => {
    const ctx = await createTestContext()
    const fiber = await ctx.plugin(Subagents, { persist: false })
    expect(listenerCount(ctx, 'agent/run')).toBe(1)
    await fiber.dispose()
    expect(listenerCount(ctx, 'agent/run')).toBe(0)
    expect(ctx.tools.get('subagent')).toBeUndefined()
  })

  it('rejects a mistyped budget key at load, naming the plugin and the nearest key', async () => {
    const ctx: TestContext = await createTestContext({ print: false })
    await expect(ctx.plugin(Subagents, { budget: { childern: 5 } } as never)).rejects.toThrow(/subagent.*childern.*children/s)
    await expect(ctx.plugin(Subagents, { budget: { children: 0 } })).rejects.toThrow(/budget.*children/s)
  })
})
