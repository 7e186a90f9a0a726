import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeAnthropic, startFakeOpenAI, type FakeAnthropicServer, type FakeOpenAIServer } from '@cordage/testing'
import { chooseModel } from '../src/model.js'
import { cordage, project } from './helpers.js'

let anthropic: FakeAnthropicServer
let openai: FakeOpenAIServer
beforeAll(async () => {
  anthropic = await startFakeAnthropic([{ thinking: 'The user greets me.', text: 'Hello from Claude.' }], { loop: true, apiKey: 'sk-ant-cli' })
  openai = await startFakeOpenAI([{ text: 'Hello from a keyless server.' }], { loop: true })
})
afterAll(async () => {
  await anthropic.close()
  await openai.close()
})

describe('choosing the model provider', { timeout: 90_000 }, () => {
  it('uses the Anthropic provider when only ANTHROPIC_API_KEY is set, shows thinking before the answer, and prints tokens and cost', async () => {
    const dir = project()
    const result = await cordage(['run', 'hi'], { cwd: dir, env: { ANTHROPIC_API_KEY: 'sk-ant-cli', ANTHROPIC_BASE_URL: anthropic.baseURL } })
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('The user greets me.\nHello from Claude.\n')
    expect(result.stderr).toMatch(/completed · 1 turn · [\d,]+ in \([\d,]+ written\) · \d+ out tokens · \$\d+\.\d+ · session/)
    const body = anthropic.requests.at(-1)!.body
    expect(body.model).toBe('claude-sonnet-4-6')
    // The default preset's tools are offered (cordage.yml absent).
    expect(body.tools.map((tool: any) => tool.name)).toContain('read')
  })

  it('--provider anthropic wins over an OpenAI key; a cordage.yml holding only model: still loads the default preset', async () => {
    const dir = project({ 'cordage.yml': 'model:\n  provider: anthropic\n  model: claude-haiku-4-5\n' })
    const before = anthropic.requests.length
    const result = await cordage(['run', '--provider', 'anthropic', 'hi'], {
      cwd: dir,
      env: { OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant-cli', ANTHROPIC_BASE_URL: anthropic.baseURL },
    })
    expect(result.code).toBe(0)
    expect(anthropic.requests.length).toBe(before + 1)
    const body = anthropic.requests.at(-1)!.body
    expect(body.model).toBe('claude-haiku-4-5')
    expect(body.tools.map((tool: any) => tool.name)).toEqual(expect.arrayContaining(['read', 'write', 'bash', 'todo_write']))
    const tools = await cordage(['tools'], { cwd: dir })
    expect(tools.stdout).toMatch(/^read\b/m)
  })

  it('--no-key talks to a keyless server at --base-url without sending the key from the environment', async () => {
    const dir = project()
    const result = await cordage(['run', '--base-url', openai.baseURL, '--no-key', '--model', 'local', 'hi'], {
      cwd: dir,
      env: { OPENAI_API_KEY: 'sk-must-not-leak' },
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('Hello from a keyless server.')
    expect(openai.requests.at(-1)!.headers.authorization).toBeUndefined()
  })

  it('refuses a keyless non-local server without --no-key, naming the setting', () => {
    expect(() => chooseModel({}, { baseURL: 'http://10.0.0.5:8000/v1' }, '/', '/', {})).toThrow(/no key for http:\/\/10.0.0.5:8000\/v1: .*--no-key/)
    expect(chooseModel({}, { baseURL: 'http://10.0.0.5:8000/v1', noKey: true }, '/', '/', {})).toEqual({
      kind: 'provider',
      provider: 'openai',
      config: { baseURL: 'http://10.0.0.5:8000/v1', noKey: true },
    })
    expect(chooseModel({ model: 'claude-opus-4-1' }, {}, '/', '/', { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'o' })).toMatchObject({ provider: 'anthropic' })
    expect(() => chooseModel({}, { provider: 'antropic' }, '/', '/', {})).toThrow(/--provider: unknown provider "antropic"; use openai .* or anthropic/)
  })

  it('cordage run --help lists every environment variable it reads', async () => {
    const result = await cordage(['run', '--help'], { cwd: project() })
    expect(result.code).toBe(0)
    for (const name of [
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'DEEPSEEK_API_KEY',
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'ANTHROPIC_BASE_URL',
      'CORDAGE_MODEL',
      'CORDAGE_PROVIDER',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'))
    }
    expect(result.stdout).toContain('--no-key')
    expect(result.stdout).toContain('--provider')
  })
})

describe('compaction in the CLI', { timeout: 90_000 }, () => {
  it('/compact in chat compacts by hand; replay shows the compaction and --resume continues from it', async () => {
    const tape = { version: 1, turns: [{ text: 'Hi there.' }, { text: 'Summary: the user said hello.' }, { text: 'Still here.' }] }
    const dir = project({ 'cordage.yml': 'plugins: []\n', 'tape.json': JSON.stringify(tape) })
    const chat = await cordage(['chat', '--cassette', 'tape.json'], { cwd: dir, input: 'hello\n/compact keep the greeting\n' })
    expect(chat.code).toBe(0)
    expect(chat.stdout).toMatch(/… compacting the conversation \(\d+ tokens, manual\)/)
    expect(chat.stdout).toMatch(/✓ compacted: 1 messages summarized, 0 results cleared/)
    const id = /session (\S+) saved/.exec(chat.stderr)![1]!
    const replay = await cordage(['replay', id], { cwd: dir })
    expect(replay.stdout).toMatch(
      /── compacted \(manual\): messages before #2 summarized, 0 results cleared, \d+ → \d+ tokens ──\nSummary: the user said hello./,
    )
    const resumed = await cordage(['run', '--cassette', 'tape.json', '--resume', id, 'and now?'], { cwd: dir, env: {} })
    // The cassette replays from its first turn; what matters is the conversation the model was sent.
    expect(resumed.code).toBe(0)
    const json = await cordage(['replay', id, '--json'], { cwd: dir })
    const messages = JSON.parse(json.stdout)
    expect(messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('Summary: the user said hello.') })
    expect(messages.filter((message: any) => message.role === 'user' && message.content === 'hello')).toHaveLength(0)
  })
})

describe('usage of subagents in the CLI', { timeout: 90_000 }, () => {
  it("the closing line adds the subagents' tokens and cost, and each child's end line shows its own", async () => {
    const tape = {
      version: 1,
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'subagent', arguments: { prompt: 'Count to three.' } }], usage: { inputTokens: 100, outputTokens: 10 } },
        { text: 'one two three', usage: { inputTokens: 40, outputTokens: 5 } },
        { text: 'The child counted.', usage: { inputTokens: 150, outputTokens: 8 } },
      ],
    }
    const dir = project({ 'cordage.yml': 'plugins:\n  subagent: {}\n', 'tape.json': JSON.stringify(tape) })
    const result = await cordage(['run', '--cassette', 'tape.json', 'delegate'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/└ ✓ subagent Count to three\. completed \(\d+ms · 40 in · 5 out · unknown price\)/)
    expect(result.stderr).toMatch(
      /completed · 2 turns · 250 in · 18 out tokens · unknown price · subagents \(1\): 40 in · 5 out tokens · unknown price · session/,
    )
  })
})
