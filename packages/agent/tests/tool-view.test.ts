import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, SessionLog } from '../src/index.js'
import { counter, tempDir } from './helpers.js'

describe('an agent tool view', () => {
  it('offers only the allowed tools and fails a call outside them without running it', async () => {
    const ctx = await createTestContext()
    const calls: string[] = []
    ctx.tools.register(counter('alpha', calls))
    ctx.tools.register(counter('beta', calls))
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'alpha' }, { name: 'beta' }] }, { text: 'done' }] })
    const agent = new Agent(ctx, { agent: 'child-1', tools: { allow: ['alpha'] } })
    await agent.run('go')
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(model.requests[0].tools.map((tool) => tool.name)).toEqual(['alpha'])
    expect(calls).toEqual(['alpha:child-1'])
    const denied = agent.messages.find((message) => message.role === 'tool' && message.name === 'beta')
    expect(denied).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Error: tool "beta" is not available to this agent; available: alpha' }] })
  })

  it('adds extra schemas (replacing a listed one of the same name) and lists hidden tools only through them', async () => {
    const ctx = await createTestContext()
    const calls: string[] = []
    ctx.tools.register(counter('alpha', calls))
    ctx.tools.register({ ...counter('report', calls), hidden: true })
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'report' }] }, { text: 'done' }] })
    const extra = {
      name: 'report',
      description: 'Report for this run.',
      parameters: { type: 'object' as const, properties: { x: { type: 'string' as const } } },
      outputSchema: {},
    }
    const agent = new Agent(ctx, { tools: { extra: [extra] } })
    await agent.run('go')
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(model.requests[0].tools.map((tool) => tool.name)).toEqual(['alpha', 'report'])
    expect(model.requests[0].tools[1]).toEqual(extra)
    expect(calls).toEqual(['report:undefined'])
  })

  it('names tool calls after the session when no agent name is given', async () => {
    const ctx = await createTestContext()
    const calls: string[] = []
    ctx.tools.register(counter('alpha', calls))
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'alpha' }] }, { text: 'done' }] })
    const session = SessionLog.create({ cwd: await tempDir(), id: 'parent-session' })
    const agent = new Agent(ctx, { session })
    await agent.run('go')
    await session.close()
    expect(agent.name).toBe('parent-session')
    expect(calls).toEqual(['alpha:parent-session'])
  })
})
