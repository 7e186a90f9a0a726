import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project, type Outcome } from './helpers.js'

const cassette = {
  version: 1,
  model: 'test',
  turns: [
    {
      text: 'Checking the notes.',
      toolCalls: [
        { id: 'call_1', name: 'echo', arguments: '{"text":"one"}' },
        { id: 'call_2', name: 'no_such_tool', arguments: '{}' },
        { id: 'call_3', name: 'echo', arguments: { text: 'fail' } },
      ],
    },
    { text: 'All done: echoed one.', usage: { inputTokens: 10, outputTokens: 5 } },
  ],
}

describe('cordage run with a cassette, then cordage replay', { timeout: 90_000 }, () => {
  const dir = project({
    'cordage.yml': 'plugins:\n  ./echo.mjs: {}\nagent:\n  system: Be brief.\n',
    'echo.mjs': echoPlugin,
    'tape.json': JSON.stringify(cassette),
  })
  let run: Outcome
  let sessionFile: string

  beforeAll(async () => {
    run = await cordage(['run', '--cassette', 'tape.json', 'say one'], { cwd: dir })
    const sessions = join(dir, '.cordage', 'sessions')
    sessionFile = join(
      sessions,
      readdirSync(sessions).find((name) => name.endsWith('.jsonl'))!,
    )
  }, 90_000)

  it('streams the text and one line per tool call with status and duration, and exits 0', () => {
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n')
    expect(lines[0]).toBe('Checking the notes.')
    expect(lines[1]).toMatch(/^ {2}✓ echo one \(\d+ms\)$/)
    expect(lines[2]).toMatch(/^ {2}✗ no_such_tool \{\} \(\d+ms\) UNKNOWN_TOOL: unknown tool "no_such_tool"; available: echo$/)
    expect(lines[3]).toMatch(/^ {2}✗ echo fail \(\d+ms\) ERROR: asked to fail$/)
    expect(lines.slice(4)).toEqual(['All done: echoed one.', ''])
    expect(run.stderr).toMatch(/completed · 2 turns · 10 in · 5 out tokens · unknown price · session \S+/)
  })

  it('writes a session log with rendered content and no canonical values', () => {
    const events = readFileSync(sessionFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events[0]).toMatchObject({ type: 'session', version: 1, cwd: dir, model: 'cassette:test' })
    const results = events.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => [event.data.callId, event.data.isError])).toEqual([
      ['call_1', false],
      ['call_2', true],
      ['call_3', true],
    ])
    expect(results[0].data.content).toEqual([{ type: 'text', text: 'echo: one' }])
    for (const result of results) expect(result.data).not.toHaveProperty('value')
    expect(events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
  })

  it('replay prints the conversation as the model saw it', async () => {
    const replay = await cordage(['replay', sessionFile], { cwd: dir })
    expect(replay.code).toBe(0)
    expect(replay.stdout).toBe(
      [
        '── system ──',
        'Be brief.',
        '── user ──',
        'say one',
        '── assistant ──',
        'Checking the notes.',
        '  → echo {"text":"one"} [call_1]',
        '  → no_such_tool {} [call_2]',
        '  → echo {"text":"fail"} [call_3]',
        '── tool echo [call_1] ──',
        'echo: one',
        '── tool no_such_tool [call_2] (error) ──',
        'Error: unknown tool "no_such_tool"; available: echo',
        '── tool echo [call_3] (error) ──',
        'Error: asked to fail',
        '── assistant ──',
        'All done: echoed one.',
        '── run: completed · 2 turns · 10 in · 5 out tokens · unknown price ──',
        '── end: completed ──',
        '',
      ].join('\n'),
    )
  })

  it('replay --json prints the derived messages, and finds a session by id', async () => {
    const id = sessionFile
      .split('/')
      .at(-1)!
      .replace(/\.jsonl$/, '')
    const replay = await cordage(['replay', id, '--json'], { cwd: dir })
    expect(replay.code).toBe(0)
    const messages = JSON.parse(replay.stdout)
    expect(messages.map((message: { role: string }) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool', 'assistant'])
    expect(messages[3]).toEqual({ role: 'tool', callId: 'call_1', name: 'echo', content: [{ type: 'text', text: 'echo: one' }], isError: false })
  })

  it('--json streams one agent event per line and ends with the result', async () => {
    const json = await cordage(['run', '--json', '--cassette', 'tape.json', 'say one'], { cwd: dir })
    expect(json.code).toBe(0)
    const events = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.filter((event) => event.type === 'tool/end').map((event) => [event.name, event.isError, event.code])).toEqual([
      ['echo', false, undefined],
      ['no_such_tool', true, 'UNKNOWN_TOOL'],
      ['echo', true, undefined],
    ])
    expect(events.at(-1)).toMatchObject({ type: 'result', stopReason: 'completed', turns: 2, text: 'All done: echoed one.' })
  })
})

describe.concurrent('cordage run failures', { timeout: 90_000 }, () => {
  it('exits 1 when the cassette runs out before the model finishes', async () => {
    const dir = project({
      'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n',
      'echo.mjs': echoPlugin,
      'short.json': JSON.stringify({ version: 1, turns: [cassette.turns[0]] }),
    })
    const result = await cordage(['run', '--cassette', 'short.json', 'go'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('run failed')
    expect(result.stderr).toContain('the cassette has no turn 2 (it holds 1)')
    const sessions = join(dir, '.cordage', 'sessions')
    const events = readFileSync(join(sessions, readdirSync(sessions)[0]), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'error' } })
    expect(events.at(-1).data.message).toContain('the cassette has no turn 2')
  })

  it('exits 1 when the turn limit stops the run', async () => {
    const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin, 'tape.json': JSON.stringify(cassette) })
    const result = await cordage(['run', '--cassette', 'tape.json', '--max-turns', '1', 'go'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('stopped: the turn limit was reached')
  })

  it('without a key, a base URL or a cassette, says how to choose a model (exit 2)', async () => {
    const result = await cordage(['run', 'go'], { cwd: project({ 'cordage.yml': 'plugins: []\n' }) })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('no model configured: set OPENAI_API_KEY, DEEPSEEK_API_KEY or ANTHROPIC_API_KEY')
  })

  it('a malformed cassette names the turn and field', async () => {
    const dir = project({ 'cordage.yml': 'plugins: []\n' })
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ version: 1, turns: [{ toolCalls: [{ arguments: '{}' }] }] }))
    const result = await cordage(['run', '--cassette', 'bad.json', 'go'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('bad.json: turns[0].toolCalls[0].name: expected string')
  })
})

describe('cordage chat', { timeout: 90_000 }, () => {
  it('reads one message per line from stdin and keeps one conversation', async () => {
    const tape = { version: 1, turns: [{ text: 'Hello there.' }, { toolCalls: [{ name: 'echo', arguments: '{"text":"again"}' }] }, { text: 'Echoed again.' }] }
    const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs: {}\n', 'echo.mjs': echoPlugin, 'tape.json': JSON.stringify(tape) })
    const result = await cordage(['chat', '--cassette', 'tape.json'], { cwd: dir, input: 'hi\n\nplease echo\n/exit\nnot sent\n' })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Hello there\.\n {2}✓ echo again \(\d+ms\)\nEchoed again\.\n$/)
    const sessions = join(dir, '.cordage', 'sessions')
    const file = join(sessions, readdirSync(sessions)[0])
    const users = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'user/message')
    expect(users.map((event) => event.data.content)).toEqual(['hi', 'please echo'])
  })
})
