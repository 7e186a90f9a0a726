import { getEventListeners } from 'node:events'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import Schema from 'schemastery'
import { describe, expect, it } from 'vitest'
import { deriveMessages } from '@cordage/agent'
import { defineTool } from '@cordage/core'
import { testToolContract } from '@cordage/testing'
import Policy from '@cordage/plugin-policy'
import { Subagents } from '../src/index.js'
import { childSessions, recorder, setup, textOf, toolMessages } from './helpers.js'

testToolContract(Subagents, {
  cases: [
    { tool: 'subagent', arguments: { prompt: 'x', outputSchema: { type: 'array' } }, expect: 'error' },
    { tool: 'subagent', arguments: { prompt: 'x', agent: 'nobody' }, expect: 'error' },
    { tool: 'subagent', arguments: {}, expect: 'error' },
  ],
})

describe('subagent in the foreground', () => {
  it("returns the child's final message as the text and the value, in a child session linked to the call", async () => {
    const { parent, session, dir, children, model } = await setup({
      turns: [{ toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: { prompt: 'Find the answer.' } }] }, { text: 'the child said 42' }],
      routes: { 'Find the answer.': [{ text: '42' }] },
    })
    await parent.run('delegate')
    await session.close()
    const [result] = toolMessages(parent, 'subagent')
    expect(result).toMatchObject({ isError: false })
    expect(textOf(result)).toBe('42')
    const [child] = await childSessions(dir)
    expect(child!.header).toMatchObject({ parent: { session: 'parent', callId: 'call_sub', tool: 'subagent' }, depth: 1 })
    // The child's log replays exactly what its model was sent, plus its answer.
    const childRequest = model.requests.find((request) =>
      request.messages.some((message) => message.role === 'user' && message.content === 'Find the answer.'),
    )!
    expect(deriveMessages(child!.events)).toEqual([...childRequest.messages, { role: 'assistant', content: '42' }])
    expect(children.map((event) => [event.type, event.runId, event.depth, event.stopReason])).toEqual([
      ['start', child!.header.id, 1, undefined],
      ['end', child!.header.id, 1, 'completed'],
    ])
  })

  it('gives the child only its tool subset and holds it for direct calls', async () => {
    const calls: string[] = []
    const { parent, model } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Use alpha.', tools: ['alpha'] } }] }, { text: 'ok' }],
        routes: { 'Use alpha.': [{ toolCalls: [{ name: 'alpha' }, { name: 'beta' }] }, { text: 'done' }] },
      },
      {},
      (ctx) => {
        ctx.tools.register(recorder('alpha', calls))
        ctx.tools.register(recorder('beta', calls))
      },
    )
    await parent.run('go')
    const childRequest = model.requests.find((request) => request.messages.some((message) => message.content === 'Use alpha.'))!
    expect(childRequest.tools.map((tool) => tool.name)).toEqual(['alpha'])
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatch(/^alpha:/)
  })

  it("applies the parent's deny rules to the child's calls", async () => {
    const calls: string[] = []
    const { parent, model } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Read the secret.' } }] }, { text: 'ok' }],
        routes: { 'Read the secret.': [{ toolCalls: [{ name: 'secret' }] }, (request) => ({ text: textOf(request.messages.at(-1) as never) })] },
      },
      {},
      async (ctx) => {
        ctx.tools.register(recorder('secret', calls))
        await ctx.plugin(Policy, { rules: [{ tool: 'secret', action: 'deny', reason: 'secrets stay home' }] })
      },
    )
    await parent.run('go')
    expect(calls).toEqual([])
    expect(textOf(toolMessages(parent, 'subagent')[0])).toContain('secrets stay home')
    expect(model.remaining).toBe(0)
  })

  it('refuses to widen the subset through a nested subagent', async () => {
    const calls: string[] = []
    const { parent } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Outer.', tools: ['alpha', 'subagent'] } }] }, { text: 'ok' }],
        routes: {
          'Outer.': [
            { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Inner.', tools: ['beta'] } }] },
            (request) => ({ text: textOf(request.messages.at(-1) as never) }),
          ],
        },
      },
      {},
      (ctx) => {
        ctx.tools.register(recorder('alpha', calls))
        ctx.tools.register(recorder('beta', calls))
      },
    )
    await parent.run('go')
    expect(textOf(toolMessages(parent, 'subagent')[0])).toContain('tools not available to the caller cannot be given to a subagent: beta')
    expect(calls).toEqual([])
  })

  it('fails past maxDepth before creating the child', async () => {
    const { parent, dir } = await setup(
      {
        turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Level one.' } }] }, { text: 'ok' }],
        routes: {
          'Level one.': [
            { toolCalls: [{ name: 'subagent', arguments: { prompt: 'Level two.' } }] },
            (request) => ({ text: textOf(request.messages.at(-1) as never) }),
          ],
        },
      },
      { maxDepth: 1 },
    )
    await parent.run('go')
    expect(textOf(toolMessages(parent, 'subagent')[0])).toBe('Error: subagent depth 2 exceeds maxDepth 1')
    expect((await childSessions(dir)).map((child) => child.header.depth)).toEqual([1])
  })

  it('runs parallel subagent calls side by side and fails those over the fan-out limit', async () => {
    // Each child calls `meet`, which returns only once two calls of it are in flight at once: children run one
    // after another never get there (the bound below is a hang bound; side by side they meet at once).
    let arrived = 0
    let met!: () => void
    const meeting = new Promise<void>((resolve) => (met = resolve))
    const meet = defineTool({
      name: 'meet',
      description: 'Waits for the other child.',
      parameters: Schema.object({}),
      concurrency: 'parallel',
      output: { schema: Schema.object({ met: Schema.boolean().required() }), render: (_a, value) => [{ type: 'text', text: `met ${value.met}` }] },
      async execute() {
        if (++arrived === 2) met()
        let timer: NodeJS.Timeout | undefined
        const alone = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, 15_000, false)))
        const together = await Promise.race([meeting.then(() => true), alone])
        clearTimeout(timer)
        return { met: together }
      },
    })
    const { parent, ctx } = await setup(
      {
        turns: [
          { toolCalls: ['A', 'B', 'C'].map((letter) => ({ name: 'subagent', arguments: { prompt: `Task ${letter}.`, tools: ['meet'] } })) },
          { text: 'ok' },
        ],
        routes: Object.fromEntries(['A', 'B', 'C'].map((letter) => [`Task ${letter}.`, [{ toolCalls: [{ name: 'meet' }] }, { text: letter }]])),
      },
      { maxConcurrent: 2 },
      (ctx) => void ctx.tools.register(meet),
    )
    const outcomes: boolean[] = []
    ctx.on('tools/result', (exec, result) => void (exec.name === 'meet' && outcomes.push(!result.isError && (result.value as { met: boolean }).met)))
    await parent.run('go')
    const results = toolMessages(parent, 'subagent').map(textOf)
    expect(results.slice(0, 2)).toEqual(['A', 'B'])
    expect(results[2]).toMatch(/^Error: this agent already runs 2 subagents \(maxConcurrent 2\)/)
    // Both children were inside `meet` at once: they overlapped.
    expect(outcomes).toEqual([true, true])
  })
})

describe('structured output', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false }

  it('returns the validated object, after the child retries an invalid one', async () => {
    const { parent, model } = await setup({
      turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Answer.', outputSchema: schema } }] }, { text: 'ok' }],
      routes: {
        'Answer.': [
          { toolCalls: [{ name: 'structured_output', arguments: { answer: 1 } }] },
          { toolCalls: [{ name: 'structured_output', arguments: { answer: 'x' } }] },
        ],
      },
    })
    await parent.run('go')
    const [result] = toolMessages(parent, 'subagent')
    expect(textOf(result)).toBe('{\n  "answer": "x"\n}')
    const childRequests = model.requests.filter((request) => request.messages.some((message) => message.content === 'Answer.'))
    expect(childRequests).toHaveLength(2)
    expect(childRequests[0]!.tools.find((tool) => tool.name === 'structured_output')?.parameters).toEqual(schema)
    expect(textOf(childRequests[1]!.messages.at(-1) as never)).toContain('/answer: must be string')
  })

  it('reminds once, then fails with STRUCTURED_OUTPUT_MISSING', async () => {
    const { parent, model } = await setup({
      turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Answer.', outputSchema: schema } }] }, { text: 'ok' }],
      routes: { 'Answer.': [{ text: 'plain words' }, { text: 'still plain' }] },
    })
    await parent.run('go')
    const [result] = toolMessages(parent, 'subagent')
    expect(result?.isError).toBe(true)
    expect(textOf(result)).toContain('the subagent finished without calling structured_output, even after a reminder')
    const reminder = model.requests.at(-2)!.messages.at(-1)
    expect(reminder).toMatchObject({ role: 'user', content: expect.stringContaining('You have not reported your result') })
  })

  it('rejects a non-object root before any child exists, and hides structured_output from everyone else', async () => {
    const { parent, dir, model, ctx } = await setup({
      turns: [
        {
          toolCalls: [
            { name: 'subagent', arguments: { prompt: 'List.', outputSchema: { type: 'array' } } },
            { name: 'structured_output', arguments: { answer: 'sneaky' } },
          ],
        },
        { text: 'ok' },
      ],
    })
    await parent.run('go')
    expect(textOf(toolMessages(parent, 'subagent')[0])).toContain('outputSchema must be an object-rooted JSON Schema')
    expect(existsSync(join(dir, '.cordage', 'sessions')) ? await childSessions(dir) : []).toEqual([])
    expect(model.requests[0]!.tools.map((tool) => tool.name)).not.toContain('structured_output')
    expect(ctx.tools.list().map((tool) => tool.name)).not.toContain('structured_output')
    expect(textOf(toolMessages(parent, 'structured_output')[0])).toContain('only offered to a subagent started with an outputSchema')
  })
})

describe('lifetime', () => {
  it('aborting the parent mid-fan-out cancels every child and leaves none running', async () => {
    const controller = new AbortController()
    const { parent, children, ctx } = await setup({
      turns: [{ toolCalls: ['A', 'B'].map((letter) => ({ name: 'subagent', arguments: { prompt: `Wait ${letter}.` } })) }],
      routes: Object.fromEntries(['A', 'B'].map((letter) => [`Wait ${letter}.`, [{ text: 'never', delayMs: 60_000 }]])),
    })
    ctx.on('agent/child', (event) => {
      if (event.type === 'start' && children.filter((each) => each.type === 'start').length === 2) setTimeout(() => controller.abort(), 50)
    })
    const result = await parent.run('go', { signal: controller.signal })
    expect(result.stopReason).toBe('aborted')
    expect(children.filter((event) => event.type === 'end').map((event) => event.stopReason)).toEqual(['aborted', 'aborted'])
    for (const message of toolMessages(parent, 'subagent')) expect(message.isError).toBe(true)
  })

  it("children share their caller's abort, not another caller's, with at most one listener on a caller's signal", async () => {
    const { ctx, children } = await setup({
      turns: [],
      routes: {
        'Wait A.': [{ text: 'never', delayMs: 60_000 }],
        'Wait B.': [{ text: 'never', delayMs: 60_000 }],
        'Wait C.': [{ text: 'never', delayMs: 60_000 }],
        'Quick.': [{ text: 'one' }, { text: 'two' }],
      },
    })
    const service = ctx.get('subagents')!
    const first = new AbortController()
    const second = new AbortController()
    const caller = (signal: AbortSignal) => ({ callId: 'call', tool: 'test', signal })
    const started = new Promise<void>((resolve) => ctx.on('agent/child', () => children.filter((event) => event.type === 'start').length === 3 && resolve()))
    const settled = [
      service.run({ prompt: 'Wait A.' }, caller(first.signal)),
      service.run({ prompt: 'Wait B.' }, caller(first.signal)),
      service.run({ prompt: 'Wait C.' }, caller(second.signal)),
    ].map((run) =>
      run.then(
        () => 'completed',
        (error: { code?: string }) => error.code,
      ),
    )
    await started
    // One listener per caller signal, however many children run under it.
    expect(getEventListeners(first.signal, 'abort')).toHaveLength(1)
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(1)
    first.abort()
    expect(await Promise.all(settled.slice(0, 2))).toEqual(['ABORTED', 'ABORTED'])
    expect(children.filter((event) => event.type === 'end')).toHaveLength(2)
    expect(getEventListeners(first.signal, 'abort')).toHaveLength(0)
    expect(getEventListeners(second.signal, 'abort'), "the other caller's child still runs").toHaveLength(1)
    second.abort()
    expect(await settled[2]).toBe('ABORTED')
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(0)
    // Sequential runs under one long-lived signal: each completes, and the one listener stays between
    // them (runs that come and go add and remove none) until the signal aborts or the plugin unloads.
    const host = new AbortController()
    const listeners = []
    for (const text of ['one', 'two']) {
      expect((await service.run({ prompt: 'Quick.' }, caller(host.signal))).text).toBe(text)
      listeners.push(...getEventListeners(host.signal, 'abort'))
    }
    expect(listeners).toHaveLength(2)
    expect(listeners[0]).toBe(listeners[1])
    // Aborted between runs, while its cached child signal listened to nothing: the next run still stops.
    host.abort()
    const before = children.length
    await expect(service.run({ prompt: 'Quick.' }, caller(host.signal))).rejects.toMatchObject({ code: 'ABORTED' })
    expect(children.length, 'no child started').toBe(before)
  })

  it('many children waiting under one caller raise no listener-leak warning', async () => {
    const count = 12
    const { ctx, children } = await setup(
      { turns: [], routes: { 'Wait.': Array.from({ length: count }, () => ({ text: 'done', delayMs: 150 })) } },
      { maxConcurrent: count },
    )
    const warnings: Error[] = []
    const onWarning = (warning: Error) => void warnings.push(warning)
    process.on('warning', onWarning)
    try {
      const caller = { callId: 'call', tool: 'test', signal: new AbortController().signal }
      const results = await Promise.all(Array.from({ length: count }, () => ctx.get('subagents')!.run({ prompt: 'Wait.' }, caller)))
      expect(results.map((result) => result.text)).toEqual(Array.from({ length: count }, () => 'done'))
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(children.filter((event) => event.type === 'end')).toHaveLength(count)
    expect(warnings.map((warning) => warning.message)).toEqual([])
  })

  it('unloading the plugin removes its tools and guard and cancels running children', async () => {
    const { parent, ctx, children, fiber } = await setup({
      turns: [{ toolCalls: [{ name: 'subagent', arguments: { prompt: 'Forever.' } }] }, { text: 'after' }],
      routes: { 'Forever.': [{ text: 'never', delayMs: 60_000 }], 'Quick.': [{ text: 'done' }] },
    })
    const service = ctx.get('subagents')!
    const direct = new AbortController()
    await service.run({ prompt: 'Quick.' }, { callId: 'direct', tool: 'test', signal: direct.signal })
    expect(getEventListeners(direct.signal, 'abort'), "the plugin's one listener, kept between runs").toHaveLength(1)
    const host = new AbortController()
    const run = parent.run('go', { signal: host.signal })
    await new Promise<void>((resolve) => ctx.on('agent/child', (event) => event.type === 'start' && resolve()))
    expect(getEventListeners(host.signal, 'abort'), "the registry's (for the subagent call) and the plugin's").toHaveLength(2)
    await fiber.dispose()
    await run
    expect(getEventListeners(direct.signal, 'abort'), "nothing of the plugin stays on a caller's signal").toHaveLength(0)
    expect(getEventListeners(host.signal, 'abort'), "only the registry's stays on the parent's signal, until the registry unloads").toHaveLength(1)
    expect(children.map((event) => [event.type, event.stopReason])).toEqual([
      ['start', undefined],
      ['end', 'completed'],
      ['start', undefined],
      ['end', 'aborted'],
    ])
    // A caller still holding the service cannot start a child of an unloaded plugin.
    await expect(service.run({ prompt: 'Later.' }, { callId: 'late', tool: 'test', signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'ABORTED',
      message: expect.stringMatching(/unloaded/),
    })
    expect(ctx.tools.list().map((tool) => tool.name)).toEqual([])
    expect(ctx.tools.get('structured_output')).toBeUndefined()
  })
})
