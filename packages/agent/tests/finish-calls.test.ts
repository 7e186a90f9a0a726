import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, type Message } from '../src/index.js'
import { counter as countBy } from './helpers.js'

const counter = (name: string, calls: string[]) => countBy(name, calls, (exec) => exec.callId)

describe('RunOptions.finishCalls (a run resumed after its user answered)', () => {
  // The last model turn asked for two calls; the first has its result, the second never started.
  const conversation: Message[] = [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'done-1', name: 'alpha', arguments: '{}' },
        { id: 'open-2', name: 'beta', arguments: '{}' },
      ],
    },
    { role: 'tool', callId: 'done-1', name: 'alpha', content: [{ type: 'text', text: 'alpha ok' }], isError: false },
  ]

  it('runs the calls of the last turn that have no result, once, before the next request', async () => {
    const ctx = await createTestContext()
    const calls: string[] = []
    ctx.tools.register(counter('alpha', calls))
    ctx.tools.register(counter('beta', calls))
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'done' }] })
    const agent = new Agent(ctx, { messages: conversation })
    const result = await agent.run(undefined, { finishCalls: true })
    expect(result.stopReason).toBe('completed')
    expect(calls).toEqual(['beta:open-2'])
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(model.requests).toHaveLength(1)
    expect(model.requests[0].messages.at(-1)).toMatchObject({ role: 'tool', callId: 'open-2', content: [{ type: 'text', text: 'beta ok' }] })
  })

  it('without it, or with an input, runs no call', async () => {
    for (const [input, options] of [
      [undefined, {}],
      ['next', { finishCalls: true }],
    ] as const) {
      const ctx = await createTestContext()
      const calls: string[] = []
      ctx.tools.register(counter('alpha', calls))
      ctx.tools.register(counter('beta', calls))
      await ctx.plugin(ScriptedModel, { turns: [{ text: 'done' }] })
      await new Agent(ctx, { messages: conversation }).run(input, options).catch(() => undefined)
      expect(calls).toEqual([])
    }
  })
})
