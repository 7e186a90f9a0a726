import { describe, expect, it } from 'vitest'
import { contentText, type ToolExecutionResult } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep, type TestContext } from '@cordage/testing'
import { Subagents } from '@cordage/plugin-subagent'
import * as codeMode from '@cordage/plugin-code-mode'
import type { ChildRunEvent } from '@cordage/services'
import * as Workflow from '../src/index.js'

async function setup(
  routes: Record<string, ScriptStep[]> = {},
  config: Partial<Workflow.Config> = {},
  withCodeMode = true,
): Promise<{ ctx: TestContext; children: ChildRunEvent[] }> {
  const ctx = await createTestContext()
  await ctx.plugin(ScriptedModel, { turns: [], routes })
  await ctx.plugin(Subagents, { persist: false, maxConcurrent: 8 })
  if (withCodeMode) await ctx.plugin(codeMode, {})
  await ctx.plugin(Workflow, config)
  const children: ChildRunEvent[] = []
  ctx.on('agent/child', (event) => void children.push(event))
  return { ctx, children }
}

function run(ctx: TestContext, code: string, signal?: AbortSignal): Promise<ToolExecutionResult> {
  return ctx.tools.execute({ name: 'workflow', arguments: { code }, ...(signal && { signal }) })
}

describe('workflow', () => {
  it("returns the program's value with no agents", async () => {
    const { ctx } = await setup()
    const result = await run(ctx, 'return 42')
    expect(result).toMatchObject({ isError: false, value: { agentsStarted: 0, result: 42 } })
    expect(contentText(result.content)).toBe('workflow completed (0 agents).\nReturn value:\n42')
  })

  it('fans out subagents with Promise.all and gets texts and validated objects back', async () => {
    const { ctx, children } = await setup({
      'Say A.': [{ text: 'A' }],
      'Say B.': [{ toolCalls: [{ name: 'structured_output', arguments: { letter: 'B' } }] }],
    })
    const schema = { type: 'object', properties: { letter: { type: 'string' } }, required: ['letter'] }
    const result = await run(
      ctx,
      `return await Promise.all([agents.run({ prompt: 'Say A.' }), agents.run({ prompt: 'Say B.', outputSchema: ${JSON.stringify(schema)} })])`,
    )
    expect(result).toMatchObject({ isError: false, value: { agentsStarted: 2, result: ['A', { letter: 'B' }] } })
    expect(contentText(result.content)).toBe('workflow completed (2 agents).\nReturn value:\n[\n  "A",\n  {\n    "letter": "B"\n  }\n]')
    expect(children.filter((event) => event.type === 'end').map((event) => event.tool)).toEqual(['workflow', 'workflow'])
  })

  it('rejects a misused agents.run loudly, naming the option', async () => {
    const { ctx, children } = await setup()
    const result = await run(ctx, 'return await agents.run({ prompt: "x", effort: "high" })')
    expect(result.isError).toBe(true)
    expect(contentText(result.content)).toContain('agents.run: unknown option "effort"')
    expect(children).toEqual([])
  })

  it('stops at maxAgents', async () => {
    const { ctx } = await setup({ 'One.': [{ text: '1' }] }, { maxAgents: 1 })
    const result = await run(ctx, 'await agents.run({ prompt: "One." }); return await agents.run({ prompt: "Two." })')
    expect(result.isError).toBe(true)
    expect(contentText(result.content)).toContain('this workflow already started 1 agents (maxAgents)')
  })

  it('aborting the call mid-fan-out leaves no running child', async () => {
    const { ctx, children } = await setup({ 'Wait A.': [{ text: 'never', delayMs: 60_000 }], 'Wait B.': [{ text: 'never', delayMs: 60_000 }] })
    const controller = new AbortController()
    ctx.on('agent/child', () => {
      if (children.filter((event) => event.type === 'start').length === 2) setTimeout(() => controller.abort(), 50)
    })
    const result = await run(ctx, 'return await Promise.all([agents.run({ prompt: "Wait A." }), agents.run({ prompt: "Wait B." })])', controller.signal)
    expect(result.isError).toBe(true)
    await expect
      .poll(
        () =>
          children
            .filter((event) => event.type === 'end')
            .map((event) => event.stopReason)
            .sort(),
        { timeout: 15_000, interval: 5 },
      )
      .toEqual(['aborted', 'aborted'])
  })

  it('without Code Mode, fails clearly', async () => {
    const { ctx } = await setup({}, {}, false)
    const result = await run(ctx, 'return 1')
    expect(result).toMatchObject({ isError: true, error: { info: { code: 'WORKFLOW_UNAVAILABLE' } } })
  })
})
