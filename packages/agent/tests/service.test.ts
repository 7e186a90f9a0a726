import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { defineTool } from '@cordage/core'
import { listenerCount } from '@cordage/registry'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { AgentService, loadSession, type AgentEvent } from '../src/index.js'
import { tempDir } from './helpers.js'

describe('the agent plugin', () => {
  it('makes persisted agents with its configured defaults, resumes them, and is gone after unloading', async () => {
    const cwd = await tempDir()
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: 'first' }, { text: 'second' }] })
    const fiber = await ctx.plugin(AgentService, { system: 'You are terse.', sessionDir: 'logs', cwd })
    const agent = ctx.get('agent')!.create()
    await agent.run('hello')
    await agent.session!.close()
    expect(agent.session!.file).toBe(join(cwd, 'logs', `${agent.session!.id}.jsonl`))
    expect(loadSession(agent.session!.file).header).toMatchObject({ model: 'scripted', cwd })

    const resumed = ctx.get('agent')!.resume(agent.session!.id)
    expect(resumed.messages.map((message) => message.content)).toEqual(['You are terse.', 'hello', 'first'])
    await resumed.run('again')
    await resumed.session!.close()
    expect(loadSession(agent.session!.file).events.filter((event) => event.type === 'session/end')).toHaveLength(2)

    // The run observers live as long as the plugin: one per event, removed on unload.
    expect(['tools/execute', 'tools/result', 'agent/notice'].map((name) => listenerCount(ctx, name))).toEqual([1, 1, 1])
    const memory = ctx.get('agent')!.create({ persist: false })
    expect(memory.session).toBeUndefined()
    expect(readdirSync(join(cwd, 'logs'))).toHaveLength(1)
    await fiber.dispose()
    expect(ctx.get('agent')).toBeUndefined()
    expect(['tools/execute', 'tools/result', 'agent/notice'].map((name) => listenerCount(ctx, name))).toEqual([0, 0, 0])
    expect(existsSync(join(cwd, '.cordage'))).toBe(false)
  })

  it('rejects an invalid config at load, naming the field', async () => {
    const ctx = await createTestContext({ print: false })
    await expect(ctx.plugin(AgentService, { maxTurns: 0 })).rejects.toThrow(/maxTurns/)
  })
})

describe('run progress and cancellation', () => {
  it('streams text deltas and turn events in order', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: ['Hel', 'lo'], usage: { inputTokens: 10, outputTokens: 2 } }] })
    await ctx.plugin(AgentService, { persist: false })
    const events: AgentEvent[] = []
    const result = await ctx
      .get('agent')!
      .create({ onEvent: (event) => events.push(event) })
      .run('hi')
    expect(result).toEqual({
      text: 'Hello',
      stopReason: 'completed',
      turns: 1,
      usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    })
    expect(events.map((event) => event.type)).toEqual(['turn/start', 'text/delta', 'text/delta', 'assistant/message', 'turn/end'])
    expect(events.filter((event) => event.type === 'text/delta').map((event) => event.delta)).toEqual(['Hel', 'lo'])
  })

  it('keeps the streamed text and answers pending calls when aborted during streaming', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, { turns: [{ text: ['partial', ' never'], toolCalls: [{ name: 'x' }], delayMs: 50 }] })
    await ctx.plugin(AgentService, { persist: false })
    const controller = new AbortController()
    const agent = ctx.get('agent')!.create({ onEvent: (event) => event.type === 'text/delta' && controller.abort() })
    const result = await agent.run('hi', { signal: controller.signal })
    expect(result).toMatchObject({ stopReason: 'aborted', text: 'partial' })
    expect(agent.messages.at(-1)).toEqual({ role: 'assistant', content: 'partial' })
  })

  it('adds an agent/notice as context before the next model request', async () => {
    const ctx = await createTestContext()
    ctx.tools.register(
      defineTool({
        name: 'finish_job',
        description: 'Pretends a background job finished.',
        parameters: Schema.object({}),
        output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'ok' }] },
        execute() {
          ctx.emit('agent/notice', { source: 'jobs', text: 'Background job job_1 exited with code 0.' })
          return { ok: true }
        },
      }),
    )
    await ctx.plugin(ScriptedModel, { turns: [{ toolCalls: [{ name: 'finish_job' }] }, { text: 'seen' }] })
    await ctx.plugin(AgentService, { persist: false })
    const agent = ctx.get('agent')!.create()
    await agent.run('go')
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(model.requests[1].messages.at(-1)).toEqual({
      role: 'user',
      content: '<context source="jobs">\nBackground job job_1 exited with code 0.\n</context>',
    })
  })

  it('keeps a notice that arrives during the final turn for the next request', async () => {
    const ctx = await createTestContext()
    await ctx.plugin(ScriptedModel, {
      turns: [
        () => {
          ctx.emit('agent/notice', { source: 'jobs', text: 'Background job job_2 (bash: sleep 1) was killed (SIGTERM).' })
          return { text: 'bye' }
        },
        { text: 'noted' },
      ],
    })
    await ctx.plugin(AgentService, { persist: false })
    const agent = ctx.get('agent')!.create()
    await agent.run('go')
    expect(agent.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('Background job job_2 (bash: sleep 1) was killed (SIGTERM)') })
    await agent.run('next')
    const model = ctx.get('model') as unknown as ScriptedModel
    expect(model.requests[1].messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'user'])
  })
})
