import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { createTestContext, ScriptedModel } from '@cordage/testing'
import { Agent, SessionLog, deriveMessages, loadSession } from '../src/index.js'
import { tempDir } from './helpers.js'

// A session as the first release wrote it: no thinking, no producing model, two-field usage, no run/end.
const OLD = [
  { type: 'session', version: 1, id: 'old', createdAt: '2026-06-01T10:00:00.000Z', cwd: '/tmp/x', model: 'openai:gpt-4o-mini' },
  { type: 'system/message', seq: 1, time: '2026-06-01T10:00:00.001Z', data: { content: 'sys' } },
  { type: 'user/message', seq: 2, time: '2026-06-01T10:00:00.002Z', data: { content: 'list files' } },
  {
    type: 'assistant/message',
    seq: 3,
    time: '2026-06-01T10:00:01.000Z',
    data: {
      content: '',
      toolCalls: [{ id: 'call_1', name: 'glob', arguments: '{"pattern":"*"}' }],
      finishReason: 'tool_calls',
      usage: { inputTokens: 50, outputTokens: 9 },
    },
  },
  {
    type: 'tool/result',
    seq: 4,
    time: '2026-06-01T10:00:01.100Z',
    data: { callId: 'call_1', name: 'glob', content: [{ type: 'text', text: 'a.ts' }], isError: false },
  },
  { type: 'assistant/message', seq: 5, time: '2026-06-01T10:00:02.000Z', data: { content: 'One file: a.ts.', finishReason: 'stop' } },
  { type: 'session/end', seq: 6, time: '2026-06-01T10:00:02.100Z', data: { reason: 'completed' } },
]

it('a session written before thinking, usage totals and compaction existed still loads, replays and resumes', async () => {
  const dir = await tempDir()
  const file = join(dir, 'old.jsonl')
  writeFileSync(file, OLD.map((line) => JSON.stringify(line)).join('\n') + '\n')
  const loaded = loadSession(file)
  expect(loaded.warnings).toEqual([])
  expect(deriveMessages(loaded.events)).toEqual([
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'list files' },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'glob', arguments: '{"pattern":"*"}' }] },
    { role: 'tool', callId: 'call_1', name: 'glob', content: [{ type: 'text', text: 'a.ts' }], isError: false },
    { role: 'assistant', content: 'One file: a.ts.' },
  ])
  const ctx = await createTestContext({ print: false })
  const model = new ScriptedModel(ctx, { turns: [{ text: 'Still one.' }] })
  const session = SessionLog.open(file)
  const result = await new Agent(ctx, { model, session }).run('and now?')
  await session.close()
  expect(result.text).toBe('Still one.')
  expect(model.requests[0]!.messages.slice(0, 5)).toEqual(deriveMessages(loaded.events))
  // The file now mixes the old lines with the new kinds (the turn's model, the run's totals), and still loads.
  const mixed = loadSession(file).events
  expect(mixed.slice(0, OLD.length - 1)).toEqual(loaded.events)
  expect(mixed.find((event) => event.type === 'run/end')?.data).toMatchObject({ stopReason: 'completed', turns: 1 })
  expect(mixed.filter((event) => event.type === 'assistant/message').at(-1)?.data).toMatchObject({ content: 'Still one.', model: 'scripted' })
})
