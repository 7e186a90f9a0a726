import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startFakeOpenAI } from '@cordage/testing'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))

function start(args: string[] = [], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
  for (const key of ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_BASE_URL']) delete env[key]
  Object.assign(env, extraEnv)
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: root, env, timeout: 170_000 }, (error, stdout, stderr) => {
      resolve({ code: child.exitCode ?? (error as { code?: number } | null)?.code ?? null, stdout, stderr })
    })
  })
}

describe.concurrent('the coding-agent example (offline)', { timeout: 180_000 }, () => {
  it('fixes the bug with real tool calls on a copy of the fixture and verifies the tests pass', async () => {
    const saved = mkdtempSync(join(tmpdir(), 'cordage-example-sessions-'))
    afterAll(() => rmSync(saved, { recursive: true, force: true }))
    const result = await start([`--save-session=${saved}`])
    expect(result.stderr).not.toContain('FAILED')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('before: 5 tests: 2 pass, 3 fail')
    expect(result.stdout).toMatch(/✓ run_code .*\n/)
    expect(result.stdout).toMatch(/↳ ✓ grep/)
    expect(result.stdout).toMatch(/✓ edit src\/cart\.js \(\d+ms\)/)
    expect(result.stdout).toContain('after: 5 tests: 5 pass, 0 fail')
    expect(result.stdout).toContain('OK: the agent fixed the bug and the tests pass.')
    // The session is kept where --save-session says, whole: from its header to its end.
    const [kept, ...others] = readdirSync(saved)
    expect(others).toEqual([])
    const events = readFileSync(join(saved, kept!), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events[0]).toMatchObject({ type: 'session' })
    expect(events.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    expect(result.stdout).toContain(`the session is in ${saved}`)
    // The fixture itself is never touched: the agent works on a temporary copy.
    expect(readFileSync(join(root, 'fixture', 'src', 'cart.js'), 'utf8')).toContain('return roundCents(amount - percent)')
  })

  it('exits non-zero when the recorded fix is wrong', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordage-example-test-'))
    afterAll(() => rmSync(dir, { recursive: true, force: true }))
    const tape = readFileSync(join(root, 'cassette.json'), 'utf8').replace('amount * (1 - percent / 100)', 'amount - percent / 100')
    writeFileSync(join(dir, 'wrong.json'), tape)
    const result = await start([`--cassette=${join(dir, 'wrong.json')}`])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('FAILED: the tests still fail: the fix did not land')
  })

  it('--live talks to an OpenAI-compatible server over HTTP and --record writes a replayable cassette', async () => {
    // The fake server speaks the real wire format and plays the bundled cassette's turns.
    const bundled = JSON.parse(readFileSync(join(root, 'cassette.json'), 'utf8')) as {
      turns: Array<{ text?: string; toolCalls?: Array<{ id: string; name: string; arguments: string }> }>
    }
    const server = await startFakeOpenAI(bundled.turns.map((turn) => ({ text: turn.text, toolCalls: turn.toolCalls })))
    const dir = mkdtempSync(join(tmpdir(), 'cordage-example-test-'))
    afterAll(async () => {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    })
    const result = await start(['--live', `--record=${join(dir, 'recorded.json')}`], { OPENAI_BASE_URL: server.baseURL })
    expect(result.stderr).not.toContain('FAILED')
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('cordage run (live model)')
    expect(server.requests).toHaveLength(bundled.turns.length)
    const recorded = JSON.parse(readFileSync(join(dir, 'recorded.json'), 'utf8'))
    expect(recorded.turns.map((turn: { toolCalls?: Array<{ name: string }> }) => turn.toolCalls?.map((call) => call.name) ?? [])).toEqual(
      bundled.turns.map((turn) => turn.toolCalls?.map((call) => call.name) ?? []),
    )
    const replay = await start([`--cassette=${join(dir, 'recorded.json')}`])
    expect(replay.code).toBe(0)
    expect(server.requests).toHaveLength(bundled.turns.length)
  })
})
