import Schema from 'schemastery'
import { expect, it } from 'vitest'
import { defineTool } from '@cordage/core'
import { createTestContext, ScriptedModel, type ScriptStep } from '@cordage/testing'
import { Agent, SessionLog, deriveMessages, loadSession, type AgentEvent } from '../src/index.js'
import { tempDir } from './helpers.js'

/** A tool whose output is `size` characters naming the file it "read". */
const readTool = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: Schema.object({ path: Schema.string().required(), size: Schema.natural().default(1200) }),
  output: { schema: Schema.object({ text: Schema.string().required() }), render: (_args, value) => [{ type: 'text', text: value.text }] },
  execute: (args) => ({ text: `${args.path}: ${'x'.repeat(args.size)}` }),
})

const step = (index: number): ScriptStep => ({
  text: `Reading file ${index}.`,
  toolCalls: [{ name: 'read_file', arguments: { path: `src/file-${index}.ts`, size: index % 7 === 0 ? 6000 : 800 } }],
})

async function setup(turns: ScriptStep[], window: number) {
  const ctx = await createTestContext({ print: false })
  const summaries: number[] = []
  const model = new ScriptedModel(ctx, {
    turns,
    contextWindow: window,
    record: false,
    summarize: (request) => {
      summaries.push(request.messages.length)
      const files = request.messages.flatMap((message) => (message.role === 'assistant' ? (message.content.match(/file \d+/g) ?? []) : []))
      return { text: `Task: read every file. Files read so far: ${files.length ? `${files[0]} to ${files.at(-1)}` : 'none'}.` }
    },
  })
  ctx.tools.register(readTool)
  return { ctx, model, summaries }
}

it('a 300-turn run against a small-window model compacts several times and completes; replay and resume see the compacted conversation', async () => {
  const turns = Array.from({ length: 299 }, (_, index) => step(index + 1))
  turns.push({ text: 'All 299 files read.' })
  const { ctx, model, summaries } = await setup(turns, 8000)
  const cwd = await tempDir()
  const session = SessionLog.create({ cwd })
  const events: AgentEvent[] = []
  const agent = new Agent(ctx, { model, session, system: 'You read files.', maxTurns: 400, onEvent: (event) => events.push(event) })
  const result = await agent.run('Read all the files.')
  expect(result).toMatchObject({ stopReason: 'completed', turns: 300, text: 'All 299 files read.' })
  const compactions = events.filter((event) => event.type === 'compact')
  expect(compactions.length).toBeGreaterThanOrEqual(3)
  expect(summaries.length).toBe(compactions.length)
  for (const event of compactions) expect(event).toMatchObject({ reason: 'auto', tokensAfter: expect.any(Number) })
  for (const event of compactions) expect((event as any).tokensAfter).toBeLessThan((event as any).tokensBefore)
  // The summary leads the conversation and the latest turns follow it verbatim.
  expect(agent.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('<context source="compaction">') })
  expect(agent.messages.at(-1)).toEqual({ role: 'assistant', content: 'All 299 files read.' })
  await session.close()
  const logged = loadSession(session.file).events
  expect(logged.filter((event) => event.type === 'session/compact')).toHaveLength(compactions.length)
  expect(JSON.stringify(deriveMessages(logged))).toBe(JSON.stringify(agent.messages))
})

it('clears bulky old tool results (keeping their calls) and says so in place of the content', async () => {
  const turns: ScriptStep[] = [
    { toolCalls: [{ id: 'big', name: 'read_file', arguments: { path: 'big.txt', size: 8000 } }] },
    { toolCalls: [{ id: 'small', name: 'read_file', arguments: { path: 'small.txt', size: 10 } }] },
    { text: 'done' },
  ]
  const { ctx, model } = await setup(turns, 1_000_000)
  const agent = new Agent(ctx, { model, system: 'sys', compaction: { auto: false, keepTokens: 100_000, clearAbove: 500 } })
  await agent.run('go')
  const record = await agent.compact()
  expect(record).toMatchObject({ reason: 'manual', cleared: ['big'] })
  const big = agent.messages.find((message) => message.role === 'tool' && message.callId === 'big')
  expect(big).toMatchObject({ content: [{ type: 'text', text: '[tool result cleared to save context; run the tool again if it is needed]' }] })
  // The call that produced it is still there.
  expect(agent.messages.some((message) => message.role === 'assistant' && message.toolCalls?.[0]?.id === 'big')).toBe(true)
})

it('compacts and retries once when the provider refuses the size (MODEL_CONTEXT_LENGTH), even without a known window', async () => {
  const turns: ScriptStep[] = [{ toolCalls: [{ name: 'read_file', arguments: { path: 'a', size: 30_000 } }] }, { text: 'fine' }]
  const { ctx, model } = await setup(turns, 6000)
  const events: AgentEvent[] = []
  // No window known to the agent: only the provider's refusal can trigger it.
  const agent = new Agent(ctx, { model, compaction: { auto: false }, onEvent: (event) => events.push(event) })
  const result = await agent.run('read a')
  expect(result.text).toBe('fine')
  expect(events.find((event) => event.type === 'compact')).toMatchObject({ reason: 'overflow' })
})

it('without a window or a refusal, never compacts, and the decision is skipped', async () => {
  const ctx = await createTestContext({ print: false })
  const model = new ScriptedModel(ctx, { turns: [{ text: 'ok' }] })
  const events: AgentEvent[] = []
  await new Agent(ctx, { model, onEvent: (event) => events.push(event) }).run('hi')
  expect(events.some((event) => event.type.startsWith('compact'))).toBe(false)
})

it('a run aborted while it compacts stops as aborted, and a failed automatic compaction leaves the conversation and goes on', async () => {
  const ctx = await createTestContext({ print: false })
  ctx.tools.register(readTool)
  const turns: ScriptStep[] = Array.from({ length: 6 }, (_, index) => ({ toolCalls: [{ name: 'read_file', arguments: { path: `f${index}`, size: 3000 } }] }))
  turns.push({ text: 'finished' })
  const controller = new AbortController()
  const slow = new ScriptedModel(ctx, { turns, contextWindow: 3000, record: false, summarize: () => ({ text: 'never', delayMs: 60_000 }) })
  const events: AgentEvent[] = []
  const aborted = new Agent(ctx, {
    model: slow,
    onEvent: (event) => {
      events.push(event)
      if (event.type === 'compact/start') setTimeout(() => controller.abort(), 20)
    },
  })
  expect((await aborted.run('read', { signal: controller.signal })).stopReason).toBe('aborted')
  expect(events.some((event) => event.type === 'compact/start')).toBe(true)
  expect(events.some((event) => event.type === 'compact')).toBe(false)

  const other = await createTestContext({ print: false })
  other.tools.register(readTool)
  // The summary comes back empty (COMPACTION_FAILED); the window is generous enough that the run still fits.
  const failing = new ScriptedModel(other, { turns: [step(1), { text: 'finished' }], contextWindow: 100_000, summarize: () => ({ text: '' }) })
  const agent = new Agent(other, { model: failing, compaction: { contextWindow: 300 } })
  const result = await agent.run('read')
  expect(result).toMatchObject({ stopReason: 'completed', text: 'finished' })
  expect(other.logs.some((log) => log.type === 'warn' && /compaction failed; continuing without it/.test(log.text))).toBe(true)
})
