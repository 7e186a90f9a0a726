import { describe, expect, it } from 'vitest'
import { Agent } from '@cordage/agent'
import { contentText, type ContentBlock } from '@cordage/core'
import * as Policy from '@cordage/plugin-policy'
import type { AgentNotice } from '@cordage/services'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import * as Interaction from '../src/index.js'
import { FakeHuman, humanPlugin, testTools } from './helpers.js'

async function setup(config: object = { planMode: true }, options: { policyFirst?: boolean } = {}) {
  const ctx = await createTestContext({ print: false })
  const ran: string[] = []
  const human = new FakeHuman()
  const approvals: string[] = []
  await ctx.plugin(humanPlugin(human))
  await ctx.plugin({
    name: 'approver',
    apply: (inner: any) => void inner.provide('approval', { request: async (exec: { name: string }) => (approvals.push(exec.name), 'allow') }),
  })
  await ctx.plugin(testTools(ran))
  const policy = { rules: [{ tool: '*', action: 'ask' as const }] }
  if (options.policyFirst) await ctx.plugin(Policy, policy)
  const fiber = await ctx.plugin(Interaction, config)
  if (!options.policyFirst) await ctx.plugin(Policy, policy)
  const modes: boolean[] = []
  const notices: AgentNotice[] = []
  ctx.on('plan/mode', (active) => void modes.push(active))
  ctx.on('agent/notice', (notice) => void notices.push(notice))
  const call = (name: string, args: object = { path: 'x' }) => ctx.tools.execute({ name, arguments: args })
  return { ctx, fiber, ran, human, approvals, modes, notices, call }
}

describe('plan mode', () => {
  it.each([false, true])('denies writing tools before policy asks anyone (policy loaded first: %s)', async (policyFirst) => {
    const { ran, approvals, call } = await setup({ planMode: true }, { policyFirst })
    for (const name of ['write_file', 'bash', 'terminal_open', 'cordis_mount']) {
      const result = await call(name)
      expect(result.isError && result.error.info?.code, name).toBe('DENIED')
    }
    expect(contentText((await call('write_file')).content)).toBe(
      'Error: plan mode is active: "write_file" writes files, so it is denied until the user approves a plan. Use read-only tools to explore, then present your complete plan with exit_plan_mode.',
    )
    expect(contentText((await call('bash')).content)).toContain('"bash" can change files or run commands')
    expect((await call('read_file')).isError).toBe(false)
    expect((await call('lookup')).isError).toBe(false)
    expect(ran).toEqual(['read_file', 'lookup'])
    // Only the allowed calls reached the approval prompt.
    expect(approvals).toEqual(['read_file', 'lookup'])
  })

  it('exit_plan_mode: approval leaves plan mode and writing tools run again', async () => {
    const { ctx, human, ran, modes, notices, call } = await setup()
    human.reviews.push({ approved: true })
    const result = await call('exit_plan_mode', { plan: '# Fix the parser\n1. add a test\n2. fix it' })
    expect(human.plans).toEqual(['# Fix the parser\n1. add a test\n2. fix it'])
    expect(!result.isError && result.value).toEqual({ approved: true })
    expect(contentText(result.content)).toBe('Plan approved: plan mode exited; carry out the plan starting with your next step.')
    expect(ctx.get('planMode')!.active).toBe(false)
    expect(modes).toEqual([false])
    expect(notices.map((notice) => notice.text)).toEqual(['Plan mode has ended: every tool is available again.'])
    expect((await call('write_file')).isError).toBe(false)
    expect(ran).toEqual(['write_file'])
    const again = await call('exit_plan_mode', { plan: '# Again' })
    expect(again.isError && again.error.info?.code).toBe('PLAN_MODE_INACTIVE')
  })

  it.each([
    [{ approved: false }, 'The user chose to keep planning; revise the plan and present it again.'],
    [{ approved: false, feedback: ' also cover X ' }, 'The user chose to keep planning; their feedback: also cover X'],
  ])('exit_plan_mode: %j keeps plan mode and returns the feedback', async (review, message) => {
    const { ctx, human, call } = await setup()
    human.reviews.push(review)
    const result = await call('exit_plan_mode', { plan: '# P\n- step' })
    expect(result.isError && result.error).toMatchObject({ message, info: { code: 'PLAN_REJECTED' } })
    expect(ctx.get('planMode')!.active).toBe(true)
    expect((await call('write_file')).isError).toBe(true)
  })

  it('exit_plan_mode without an interaction service keeps plan mode and says to report the plan', async () => {
    const ctx = await createTestContext({ print: false })
    await ctx.plugin(Interaction, { planMode: true })
    const result = await ctx.tools.execute({ name: 'exit_plan_mode', arguments: { plan: '# P' } })
    expect(result.isError && result.error.info?.code).toBe('INTERACTION_UNAVAILABLE')
    expect(contentText(result.content)).toMatch(/Plan mode stays on: stop and give the complete plan as your final answer\.$/)
    expect(ctx.get('planMode')!.active).toBe(true)
  })

  it('exit_plan_mode refuses a plan without a heading, before showing it', async () => {
    const { human, call } = await setup()
    const result = await call('exit_plan_mode', { plan: 'do stuff' })
    expect(result.isError && result.error.info?.code).toBe('INVALID_PLAN')
    expect(human.plans).toEqual([])
  })

  it('ctx.planMode enters and leaves plan mode, telling running agents', async () => {
    const { ctx, modes, notices, call } = await setup({})
    expect((await call('write_file')).isError).toBe(false)
    ctx.get('planMode')!.set(true)
    ctx.get('planMode')!.set(true)
    expect((await call('write_file')).isError).toBe(true)
    ctx.get('planMode')!.set(false)
    expect((await call('write_file')).isError).toBe(false)
    expect(modes).toEqual([true, false])
    expect(notices[0]!.text).toMatch(/^Plan mode is active: explore and plan, but change nothing/)
  })

  it('honours a configured list of always-writing tools', async () => {
    const { call } = await setup({ planMode: true, writeTools: ['look*'] })
    expect((await call('lookup')).isError).toBe(true)
    expect((await call('bash')).isError).toBe(false)
  })

  it('rejects a bad writeTools entry at load', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(Interaction, { writeTools: ['bad name!'] })).rejects.toThrow()
    expect(ctx.tools.get('exit_plan_mode')).toBeUndefined()
  })

  it('an agent in plan mode is told so, is denied writes, and writes after approval', async () => {
    const { ctx, human, ran } = await setup()
    human.reviews.push({ approved: true })
    const model = await ctx.plugin(ScriptedModel, {
      turns: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'a' } }] },
        { toolCalls: [{ name: 'exit_plan_mode', arguments: { plan: '# Plan\nwrite a' } }] },
        { toolCalls: [{ name: 'write_file', arguments: { path: 'a' } }] },
        { text: 'done' },
      ],
    })
    void model
    const agent = new Agent(ctx, { system: 'Base.' })
    const result = await agent.run('change a')
    expect(result.stopReason).toBe('completed')
    expect((agent.messages[0] as { content: string }).content).toMatch(/^Base\.\n\nPlan mode is active: /)
    const results = agent.messages.filter((message) => message.role === 'tool').map((message) => contentText((message as { content: ContentBlock[] }).content))
    expect(results[0]).toMatch(/plan mode is active: "write_file" writes files/)
    expect(results[1]).toContain('Plan approved')
    expect(ran).toEqual(['write_file'])
  })

  it('unloading in plan mode removes the pre-execute listener', async () => {
    const { fiber, call } = await setup()
    expect((await call('write_file')).isError).toBe(true)
    await fiber.dispose()
    expect((await call('write_file')).isError).toBe(false)
  })
})
