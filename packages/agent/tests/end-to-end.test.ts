import { readFileSync } from 'node:fs'
import { afterEach, expect, it } from 'vitest'
import { OpenAIModel } from '@cordage/plugin-model-openai'
import { createTestContext, startFakeOpenAI, type FakeOpenAIServer, type FakeTurn } from '@cordage/testing'
import { Agent, SessionLog, deriveMessages, loadSession } from '../src/index.js'
import { secretTool, tempDir } from './helpers.js'

const MARKER = 'VALUE-ONLY-d41c8e'
const servers: FakeOpenAIServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

async function start(turns: FakeTurn[]) {
  const server = await startFakeOpenAI(turns)
  servers.push(server)
  const ctx = await createTestContext({ print: false })
  ctx.tools.register(secretTool(MARKER))
  await ctx.plugin(OpenAIModel, { baseURL: server.baseURL, apiKey: 'sk-test', model: 'fake-model', backoffMs: 1 })
  return { server, ctx }
}

it('persists an HTTP run without values and resumes it sending the same conversation, byte for byte', async () => {
  const cwd = await tempDir()
  const first = await start([
    {
      text: 'Checking both.',
      toolCalls: [
        { id: 'call_a', name: 'lookup', arguments: { key: 'alpha' } },
        { id: 'call_b', name: 'lookup', arguments: { id: 7 } },
      ],
    },
    { text: 'Alpha found; beta was malformed.' },
  ])
  const session = SessionLog.create({ cwd, model: 'openai:fake-model' })
  const agent = new Agent(first.ctx, { session, system: 'Be exact.' })
  expect(await agent.run('Look up alpha and beta.')).toMatchObject({ stopReason: 'completed', text: 'Alpha found; beta was malformed.' })
  await session.close({ reason: 'completed' })

  const file = readFileSync(session.file, 'utf8')
  expect(file).not.toContain(MARKER)
  const results = loadSession(session.file)
    .events.filter((event) => event.type === 'tool/result')
    .map((event) => event.data)
  expect(results).toMatchObject([
    { callId: 'call_a', content: [{ type: 'text', text: 'found alpha' }], isError: false },
    { callId: 'call_b', isError: true, error: { code: 'INVALID_ARGS' } },
  ])
  // The second request carried the rendered results exactly.
  const sent = first.server.requests[1].body.messages
  expect(sent.filter((message: any) => message.role === 'tool').map((message: any) => message.content)).toEqual([
    'found alpha',
    expect.stringMatching(/^Error: invalid arguments for lookup/),
  ])

  const second = await start([{ text: 'Still alpha.' }])
  const resumed = new Agent(second.ctx, { session: SessionLog.open(session.file) })
  expect(JSON.stringify(resumed.messages)).toBe(JSON.stringify(agent.messages))
  await resumed.run('Again?')
  await resumed.session!.close()
  // On the wire, the resumed request starts with exactly what the original second request sent.
  const again = second.server.requests[0].body.messages
  expect(JSON.stringify(again.slice(0, sent.length))).toBe(JSON.stringify(sent))
  expect(again.slice(sent.length)).toEqual([
    { role: 'assistant', content: 'Alpha found; beta was malformed.' },
    { role: 'user', content: 'Again?' },
  ])
  expect(deriveMessages(loadSession(session.file).events).at(-1)).toEqual({ role: 'assistant', content: 'Still alpha.' })
})
