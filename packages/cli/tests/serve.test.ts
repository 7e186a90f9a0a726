import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { cordage, project } from './helpers.js'
import { processesWith, sleepers, start, waitFor, type Running } from './processes.js'

const running: Running[] = []
const markers: string[] = []
afterEach(() => {
  for (const { child } of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of markers.splice(0).flatMap(processesWith)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
})

const config = `plugins:
  '@cordage/plugin-policy': { rules: [{ tool: bash, action: ask }] }
  '@cordage/plugin-shell': {}
`

function sessionEvents(dir: string, id: string): Array<{ type: string; data: any }> {
  return readFileSync(join(dir, '.cordage', 'sessions', `${id}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => JSON.parse(line))
}

/** Starts `cordage serve` and waits for the URL, which must be the first line on stdout. */
async function serve(dir: string, args: string[] = []): Promise<{ cli: Running; url: string }> {
  const cli = start(['serve', '--port', '0', ...args], dir)
  running.push(cli)
  expect(await waitFor(() => cli.stdout().includes('\n') || cli.child.exitCode !== null, 30_000), cli.stderr()).toBe(true)
  const url = cli.stdout().split('\n')[0]
  expect(url, cli.stderr()).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  return { cli, url }
}

async function pendingOf(url: string, id: string): Promise<Array<{ id: string; kind: string; tool: string }>> {
  let pending: Array<{ id: string; kind: string; tool: string }> = []
  for (let attempt = 0; attempt < 400 && !pending.length; attempt++) {
    pending = (await (await fetch(`${url}/api/runs/${id}/pending`)).json()) as typeof pending
    if (!pending.length) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return pending
}

describe('cordage serve', { timeout: 60_000 }, () => {
  it('prints the URL first, serves runs from a cassette with approvals over the API, and a SIGTERM cancels them and exits 0', async () => {
    const { command, marker } = sleepers(5)
    markers.push(marker)
    const tape = JSON.stringify({ version: 1, turns: [{ toolCalls: [{ name: 'bash', arguments: { command, timeout_ms: 300_000 } }] }, { text: 'Done.' }] })
    const dir = project({ 'cordage.yml': config, 'tape.json': tape })
    const { cli, url } = await serve(dir)
    expect(await (await fetch(`${url}/api/sessions`)).json()).toEqual([])
    expect((await fetch(`${url}/`)).status).toBe(200)
    const started = await fetch(`${url}/api/runs`, { method: 'POST', body: JSON.stringify({ prompt: 'start the sleepers', cassette: 'tape.json' }) })
    expect(started.status, await started.clone().text()).toBe(202)
    const { id } = (await started.json()) as { id: string }
    const [request] = await pendingOf(url, id)
    expect(request).toMatchObject({ kind: 'approval', tool: 'bash' })
    const answered = await fetch(`${url}/api/runs/${id}/answers`, { method: 'POST', body: JSON.stringify({ requestId: request.id, answer: 'allow' }) })
    expect(answered.status).toBe(200)
    expect(await waitFor(() => processesWith(marker).length >= 5, 20_000), cli.stderr()).toBe(true)
    const listed = (await (await fetch(`${url}/api/sessions`)).json()) as Array<{ id: string; status: string }>
    expect(listed).toMatchObject([{ id, status: 'running' }])
    cli.child.kill('SIGTERM')
    expect(await cli.exited, cli.stderr()).toEqual({ code: 0, signal: null })
    // The run was cancelled: its processes are gone and its session ended as cancelled.
    expect(processesWith(marker)).toEqual([])
    expect(sessionEvents(dir, id).at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'cancelled' } })
    expect(cli.stdout().trim().split('\n')).toEqual([url])
  })

  it('refuses a non-loopback --host without a token (exit 2, nothing on stdout), and starts with one', async () => {
    const dir = project({})
    const refused = await cordage(['serve', '--host', '0.0.0.0', '--port', '0'], { cwd: dir })
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/token/i)
    const bad = await cordage(['serve', '--port', '70000'], { cwd: dir })
    expect(bad.code).toBe(2)
    const cli = start(['serve', '--host', '0.0.0.0', '--port', '0'], project({ 'cordage.yml': 'serve: { token: a-token-of-enough-length }\n' }))
    running.push(cli)
    expect(await waitFor(() => cli.stdout().includes('\n'), 30_000), cli.stderr()).toBe(true)
    const port = new URL(cli.stdout().split('\n')[0]).port
    expect((await fetch(`http://0.0.0.0:${port}/api/health`)).status).toBe(401)
    const ok = await fetch(`http://0.0.0.0:${port}/api/health`, { headers: { authorization: 'Bearer a-token-of-enough-length' } })
    expect(ok.status).toBe(200)
    cli.child.kill('SIGINT')
    expect(await cli.exited).toEqual({ code: 0, signal: null })
    expect(readdirSync(dir)).toEqual([])
  })
})
