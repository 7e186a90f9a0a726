import { describe, expect, it } from 'vitest'
import { cordage, echoPlugin, project } from './helpers.js'
import { processesWith, sleepers } from './processes.js'

describe.concurrent('cordage call', { timeout: 90_000 }, () => {
  const dir = project({ 'cordage.yml': 'plugins:\n  ./echo.mjs:\n    prefix: said\n', 'echo.mjs': echoPlugin })

  it('prints the rendered content of a successful call and exits 0', async () => {
    const result = await cordage(['call', 'echo', '{"text":"hello"}'], { cwd: dir })
    expect(result).toMatchObject({ code: 0, stdout: 'said: hello\n' })
  })

  it('prints the canonical value with --json', async () => {
    const result = await cordage(['call', 'echo', '{"text":"hello"}', '--json'], { cwd: dir })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ said: 'hello' })
  })

  it('exits 1 on a failed result and prints the failure content to stderr', async () => {
    const result = await cordage(['call', 'echo', '{"text":"fail"}'], { cwd: dir })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain('Error: asked to fail')
  })

  it('reports a failure as JSON with --json (message, code, content)', async () => {
    const result = await cordage(['call', 'missing_tool', '{}', '--json'], { cwd: dir })
    expect(result.code).toBe(1)
    const failure = JSON.parse(result.stdout)
    expect(failure).toMatchObject({ isError: true, error: { code: 'UNKNOWN_TOOL' } })
    expect(failure.error.message).toContain('available: echo')
    expect(failure.content[0].text).toMatch(/^Error: unknown tool "missing_tool"/)
  })

  it('rejects arguments that are not JSON with a usage error (exit 2)', async () => {
    const result = await cordage(['call', 'echo', '{text:'], { cwd: dir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('the arguments are not valid JSON')
  })

  it('calls a first-party tool from the default preset when there is no cordage.yml', async () => {
    const plain = project({ 'notes.txt': 'first\nsecond\n' })
    const value = await cordage(['call', 'read', '{"path":"notes.txt"}', '--json'], { cwd: plain })
    expect(value.code).toBe(0)
    expect(JSON.parse(value.stdout)).toMatchObject({
      lines: [
        { number: 1, text: 'first' },
        { number: 2, text: 'second' },
      ],
    })
    const content = await cordage(['call', 'read', '{"path":"notes.txt"}'], { cwd: plain })
    expect(content.code).toBe(0)
    expect(content.stdout).toMatch(/1.*first\n.*2.*second/s)
  })

  it('unloads every plugin before exiting: a background job does not outlive the command', async ({ expect }) => {
    const plain = project()
    // The job's shell carries the marker in its command line from its start (and its sleep after it).
    const { command, marker } = sleepers(1)
    try {
      const result = await cordage(['call', 'bash', JSON.stringify({ command, run_in_background: true }), '--json'], { cwd: plain })
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'background' })
      await expect.poll(() => processesWith(marker), { timeout: 10_000 }).toEqual([])
    } finally {
      for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')
    }
  })
})
