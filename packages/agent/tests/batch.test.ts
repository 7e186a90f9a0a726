import { describe, expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, type AgentEvent, type Message } from '../src/index.js'
import { Gate, noteTool, sleepTool, type Interval } from './helpers.js'

type ToolMessage = Extract<Message, { role: 'tool' }>

function toolMessages(messages: Message[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => message.role === 'tool')
}

async function setup(turns: ConstructorParameters<typeof ScriptedModel>[1]['turns']) {
  const ctx = await createTestContext()
  const intervals: Interval[] = []
  const gate = new Gate()
  ctx.tools.register(sleepTool('nap', 'parallel', intervals, gate))
  ctx.tools.register(sleepTool('work', 'exclusive', intervals, gate))
  ctx.tools.register(sleepTool('maybe', (args) => (args as { label: string }).label.startsWith('r'), intervals, gate))
  await ctx.plugin(ScriptedModel, { turns })
  return { ctx, intervals, gate, model: ctx.get('model') as unknown as ScriptedModel }
}

describe('tool batches', () => {
  it('runs consecutive parallel-safe calls together and commits results in model order', async () => {
    const { ctx, gate } = await setup([
      {
        toolCalls: [
          { name: 'nap', arguments: { label: 'a', held: true } },
          { name: 'nap', arguments: { label: 'b', held: true } },
          { name: 'nap', arguments: { label: 'c', held: true } },
        ],
      },
      { text: 'done' },
    ])
    const events: AgentEvent[] = []
    const agent = new Agent(ctx, { onEvent: (event) => events.push(event) })
    const running = agent.run('go')
    // Every body started before any ended: the three run at once.
    await gate.whenRunning(['a', 'b', 'c'])
    const heldFrom = performance.now()
    const ended = (callId: string) => events.some((event) => event.type === 'tool/end' && event.callId === callId)
    // Released b, then c, then a, each once the previous one's end was reported.
    gate.release('b')
    await expect.poll(() => ended('call_1_1'), { timeout: 15_000, interval: 1 }).toBe(true)
    gate.release('c')
    await expect.poll(() => ended('call_1_2'), { timeout: 15_000, interval: 1 }).toBe(true)
    const heldFor = performance.now() - heldFrom
    gate.release('a')
    const result = await running
    expect(result).toMatchObject({ text: 'done', stopReason: 'completed', turns: 2 })
    expect(toolMessages(agent.messages).map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'slept a' }],
      [{ type: 'text', text: 'slept b' }],
      [{ type: 'text', text: 'slept c' }],
    ])
    // Progress reports completion order (b first), while the conversation keeps model order.
    const ends = events.filter((event) => event.type === 'tool/end')
    expect(ends.map((event) => event.callId)).toEqual(['call_1_1', 'call_1_2', 'call_1_0'])
    for (const end of ends) expect(end).toMatchObject({ isError: false, name: 'nap' })
    // a's duration covers at least the time the test held it.
    expect((ends[2] as Extract<AgentEvent, { type: 'tool/end' }>).durationMs).toBeGreaterThanOrEqual(heldFor)
  })

  it('runs exclusive calls one at a time, as barriers between parallel groups', async () => {
    const held = (name: string, label: string) => ({ name, arguments: { label, held: true } })
    const { ctx, gate } = await setup([
      {
        toolCalls: [held('nap', 'p1'), held('nap', 'p2'), held('work', 'x1'), held('work', 'x2'), held('maybe', 'r1'), held('nap', 'p3'), held('maybe', 'w1')],
      },
      { text: 'done' },
    ])
    const agent = new Agent(ctx)
    const running = agent.run('go')
    // Each group runs alone, and the next starts only once it is released. A concurrency function answering
    // true makes r1 parallel-safe (it runs with p3); answering false makes w1 exclusive.
    for (const group of [['p1', 'p2'], ['x1'], ['x2'], ['r1', 'p3'], ['w1']]) {
      await gate.whenRunning(group)
      gate.release(...group)
    }
    await running
    expect(toolMessages(agent.messages).map((message) => message.content[0])).toEqual(
      ['p1', 'p2', 'x1', 'x2', 'r1', 'p3', 'w1'].map((label) => ({ type: 'text', text: `slept ${label}` })),
    )
  })

  it('gives calls not yet started ABORTED_BEFORE_DISPATCH when the run is aborted mid-batch', async () => {
    const { ctx, intervals, gate, model } = await setup([
      {
        toolCalls: [
          { name: 'work', arguments: { label: 'first', held: true } },
          { name: 'work', arguments: { label: 'second' } },
          { name: 'nap', arguments: { label: 'third' } },
        ],
      },
      { text: 'never requested' },
    ])
    const controller = new AbortController()
    const agent = new Agent(ctx)
    const running = agent.run('go', { signal: controller.signal })
    await gate.whenRunning(['first'])
    controller.abort()
    const result = await running
    expect(result.stopReason).toBe('aborted')
    expect(model.requests).toHaveLength(1)
    expect(intervals.map((interval) => interval.label)).toEqual(['first'])
    const results = toolMessages(agent.messages)
    expect(results.map((message) => [message.callId, message.isError, message.content])).toEqual([
      ['call_1_0', true, [{ type: 'text', text: 'Error: the tool call was cancelled' }]],
      ['call_1_1', true, [{ type: 'text', text: 'Error: the tool call was cancelled before it started' }]],
      ['call_1_2', true, [{ type: 'text', text: 'Error: the tool call was cancelled before it started' }]],
    ])
  })

  it('answers malformed tool-call JSON with an INVALID_ARGS result the model sees, without running the tool', async () => {
    const { ctx, intervals, model } = await setup([
      {
        toolCalls: [
          { name: 'nap', arguments: '{"label": "a", ' },
          { name: 'nap', arguments: { label: 'b', ms: 1 } },
        ],
      },
      { text: 'sorry' },
    ])
    const events: AgentEvent[] = []
    const agent = new Agent(ctx, { onEvent: (event) => events.push(event) })
    const result = await agent.run('go')
    expect(result).toMatchObject({ stopReason: 'completed', text: 'sorry' })
    expect(intervals.map((interval) => interval.label)).toEqual(['b'])
    const [bad, good] = toolMessages(model.requests[1].messages)
    expect(bad.isError).toBe(true)
    expect(bad.content[0]).toMatchObject({ type: 'text' })
    expect((bad.content[0] as { text: string }).text).toMatch(
      /^Error: the arguments of nap are not valid JSON \(.+\); send one JSON object matching the tool's parameters$/,
    )
    expect(good).toMatchObject({ isError: false, content: [{ type: 'text', text: 'slept b' }] })
    expect(events.find((event) => event.type === 'tool/end' && event.callId === 'call_1_0')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
  })

  it('stops with max-turns after the configured number of model requests', async () => {
    const call = { toolCalls: [{ name: 'nap', arguments: { label: 'again', ms: 1 } }] }
    const { ctx, model } = await setup([call, call, call, { text: 'unreachable' }])
    const agent = new Agent(ctx, { maxTurns: 2 })
    const result = await agent.run('loop')
    expect(result).toMatchObject({ stopReason: 'max-turns', turns: 2 })
    expect(model.requests).toHaveLength(2)
    // The second turn's results are committed, so a later run resumes from a valid conversation.
    expect(agent.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'call_2_0' })
    expect(await agent.run(undefined, { maxTurns: 1 })).toMatchObject({ stopReason: 'max-turns', turns: 1 })
    expect(model.requests).toHaveLength(3)
  })

  it('appends additionalContexts as user-role context after the whole batch, in model order', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(noteTool())
    await ctx.plugin(ScriptedModel, {
      turns: [
        {
          toolCalls: [
            { name: 'note', arguments: { text: 'one' } },
            { name: 'note', arguments: { text: 'two' } },
          ],
        },
        { text: 'ok' },
      ],
    })
    const agent = new Agent(ctx)
    await agent.run('go')
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(
      model.requests[1].messages.slice(1).map((message) => [message.role, 'content' in message && typeof message.content === 'string' ? message.content : '-']),
    ).toEqual([
      ['assistant', ''],
      ['tool', '-'],
      ['tool', '-'],
      ['user', '<context source="lint">\none\n</context>'],
      ['user', '<context source="lint">\ntwo\n</context>'],
    ])
  })

  it('rejects with the model error when the model fails, and with NO_MODEL without one', async () => {
    const { ctx } = await setup([{ text: 'partial', error: new Error('upstream 500') }])
    await expect(new Agent(ctx).run('go')).rejects.toThrow(/upstream 500/)
    const bare = await createTestContext()
    await expect(new Agent(bare).run('go')).rejects.toMatchObject({ code: 'NO_MODEL' })
  })

  it('reports a clear error when the script runs out', async () => {
    const { ctx } = await setup([{ toolCalls: [{ name: 'nap', arguments: { label: 'a', ms: 1 } }] }])
    await expect(new Agent(ctx).run('go')).rejects.toThrow(/the scripted model has 1 turn\(s\) but request 2 arrived/)
  })
})
