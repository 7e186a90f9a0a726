import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startFakeOpenAI } from '@cordage/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project } from './helpers.js'

describe('cordage run --record, then --cassette', { timeout: 90_000 }, () => {
  const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin })
  const durations = (text: string) => text.replace(/\(\d+ms\)/g, '(…)')

  it("records the real provider's turns and replays them with no network", async () => {
    const server = await startFakeOpenAI([
      { text: 'Let me echo.', toolCalls: [{ id: 'call_a', name: 'echo', arguments: { text: 'hi' } }] },
      { text: 'Done: it said hi.' },
    ])
    afterAll(() => server.close())
    const live = await cordage(['run', '--base-url', server.baseURL, '--model', 'fake-1', '--record', 'tape.json', 'say hi'], { cwd: dir })
    expect(live.code).toBe(0)
    expect(live.stderr).toContain(`recorded 2 turns to ${join(dir, 'tape.json')}`)
    expect(server.requests).toHaveLength(2)
    expect(server.requests[0].body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual(['echo'])
    expect(server.requests[1].body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_a', content: 'echo: hi' })

    const tape = JSON.parse(readFileSync(join(dir, 'tape.json'), 'utf8'))
    expect(tape).toMatchObject({
      version: 1,
      turns: [
        { text: 'Let me echo.', toolCalls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"hi"}' }], finishReason: 'tool_calls' },
        { text: 'Done: it said hi.', finishReason: 'stop' },
      ],
    })

    const replay = await cordage(['run', '--cassette', 'tape.json', 'say hi'], { cwd: dir })
    expect(replay.code).toBe(0)
    expect(durations(replay.stdout)).toBe(durations(live.stdout))
    expect(replay.stdout).toMatch(/^Let me echo\.\n {2}✓ echo hi \(\d+ms\)\nDone: it said hi\.\n$/)
    expect(server.requests).toHaveLength(2)
  })
})
