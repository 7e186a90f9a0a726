import type pg from 'pg'
// @ts-expect-error: pg publishes no types for this subpath (it is pg's `Client`)
import ClientModule from 'pg/lib/client.js'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { PostgresSessionStore } from '@cordage/plugin-store-postgres'
import type { StoredEvent } from '@cordage/services'
import { cordage, project } from './helpers.js'
import { processesWith, sleepers, start, waitFor, type Running } from './processes.js'

const Client = ClientModule as typeof pg.Client
const serverUrl = process.env.CORDAGE_TEST_POSTGRES_URL

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

/** Turns that echo, one call per turn, then a long call (sleepers) the run is killed in, then a last word. */
function tape(turns: number, long: string): string {
  const echo = Array.from({ length: turns }, (_, index) => ({
    text: `Turn ${index + 1}.`,
    toolCalls: [{ id: `call_${index + 1}`, name: 'bash', arguments: { command: `echo step-${index + 1}` } }],
  }))
  return JSON.stringify({
    version: 1,
    turns: [
      ...echo,
      { text: 'Now the long one.', toolCalls: [{ id: 'call_long', name: 'bash', arguments: { command: long, timeout_ms: 300_000 } }] },
      { text: 'Finished.' },
    ],
  })
}

describe.skipIf(!serverUrl)('PostgreSQL for real (needs CORDAGE_TEST_POSTGRES_URL)', { timeout: 120_000 }, () => {
  const name = `cordage_cli_${process.pid}_${Math.random().toString(16).slice(2, 8)}`
  let admin: pg.Client
  let url = ''
  let store: PostgresSessionStore
  beforeAll(async () => {
    admin = new Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    const parsed = new URL(serverUrl!)
    parsed.pathname = `/${name}`
    url = parsed.toString()
    store = new PostgresSessionStore({ url, pollMs: 20 })
    await store.open()
  }, 60_000)
  afterAll(async () => {
    await store?.close()
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin?.end()
  }, 60_000)

  it('kill -9 of a run loses no acknowledged event; --resume continues from the store; replay reads it', async () => {
    const { command, marker } = sleepers(3)
    markers.push(marker)
    const dir = project({
      'cordage.yml': `store: { postgres: '${url}' }\nplugins:\n  '@cordage/plugin-shell': {}\n`,
      'tape.json': tape(6, command),
      'more.json': JSON.stringify({ version: 1, turns: [{ text: 'Resumed and done.' }] }),
    })
    const cli = start(['run', '--cassette', 'tape.json', 'work through the steps'], dir)
    running.push(cli)
    // A follower in this process sees exactly what the store acknowledged (committed), as it is committed.
    const id = await (async () => {
      for (let attempt = 0; attempt < 600; attempt++) {
        const [session] = await store.list({})
        if (session) return session.header.id
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`no session was created; stderr: ${cli.stderr()}`)
    })()
    const acknowledged: StoredEvent[] = []
    const controller = new AbortController()
    const following = (async () => {
      for await (const event of store.follow(id, { signal: controller.signal })) acknowledged.push(event)
    })()
    expect(await waitFor(() => processesWith(marker).length >= 3, 30_000), cli.stderr()).toBe(true)
    // Everything before the long call is committed (the turns end before it starts); kill mid-call.
    expect(
      await waitFor(() => acknowledged.some((event) => event.type === 'tool/result' && (event.data as { callId: string }).callId === 'call_6'), 10_000),
    ).toBe(true)
    cli.child.kill('SIGKILL')
    expect((await cli.exited).signal).toBe('SIGKILL')
    // The follower catches up with everything committed before the kill.
    await expect.poll(async () => acknowledged.length === (await store.read(id)).events.length, { timeout: 15_000, interval: 20 }).toBe(true)
    controller.abort()
    await following
    for (const pid of processesWith(marker)) process.kill(pid, 'SIGKILL')

    const stored = (await store.read(id)).events
    expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1))
    // Every event the store acknowledged is there, unchanged.
    expect(stored.slice(0, acknowledged.length)).toEqual(acknowledged)
    expect(stored.filter((event) => event.type === 'tool/result')).toHaveLength(6)
    expect(stored.some((event) => event.type === 'session/end')).toBe(false)

    const resumed = await cordage(['run', '--resume', id, '--cassette', 'more.json', 'carry on'], { cwd: dir })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain('Resumed and done.')
    const after = (await store.read(id)).events
    expect(after.slice(0, stored.length)).toEqual(stored)
    expect(after.map((event) => event.seq)).toEqual(after.map((_, index) => index + 1))
    expect(after.find((event) => event.type === 'user/message' && (event.data as { content: string }).content === 'carry on')).toBeDefined()
    expect(after.at(-1)).toMatchObject({ type: 'session/end', data: { reason: 'completed' } })
    // The resumed conversation carried the earlier turns: the model was sent them (the replay shows them in order).
    const replay = await cordage(['replay', id], { cwd: dir })
    expect(replay.code, replay.stderr).toBe(0)
    const order = ['Turn 1.', 'step-1', 'Turn 6.', 'step-6', 'carry on', 'Resumed and done.', 'end: completed'].map((text) => replay.stdout.indexOf(text))
    expect(order.every((position) => position >= 0)).toBe(true)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    const json = await cordage(['replay', id, '--json'], { cwd: dir })
    expect(JSON.parse(json.stdout).at(-1)).toMatchObject({ role: 'assistant', content: 'Resumed and done.' })
  })

  it('kill -9 at random points of a fast run never leaves a gap or a changed event', async () => {
    const dir = project({ 'cordage.yml': `store: { postgres: '${url}' }\nplugins:\n  '@cordage/plugin-shell': {}\n`, 'tape.json': tape(40, 'true') })
    let midRun = 0
    // Each kill lands once the follower has seen this many acknowledged events (a 40-turn run stores over 80),
    // so the kills fall mid-run however fast or loaded the machine is.
    for (const killAt of [2, 9, 23, 41, 66]) {
      const before = new Set((await store.list({})).map((summary) => summary.header.id))
      const cli = start(['run', '--cassette', 'tape.json', 'go'], dir)
      running.push(cli)
      let id: string | undefined
      const acknowledged: StoredEvent[] = []
      const controller = new AbortController()
      let following: Promise<void> = Promise.resolve()
      const deadline = Date.now() + 30_000
      while (!id && Date.now() < deadline) {
        id = (await store.list({})).find((summary) => !before.has(summary.header.id))?.header.id
        if (!id) await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(id, cli.stderr()).toBeDefined()
      following = (async () => {
        for await (const event of store.follow(id!, { signal: controller.signal })) {
          acknowledged.push(event)
          if (acknowledged.length === killAt) cli.child.kill('SIGKILL')
        }
      })()
      await cli.exited
      await expect.poll(async () => acknowledged.length === (await store.read(id!)).events.length, { timeout: 15_000, interval: 20 }).toBe(true)
      controller.abort()
      await following
      const stored = (await store.read(id!)).events
      expect(stored.map((event) => event.seq)).toEqual(stored.map((_, index) => index + 1))
      expect(stored.slice(0, acknowledged.length)).toEqual(acknowledged)
      if (stored.length > 1 && stored.at(-1)!.type !== 'session/end') midRun++
    }
    // The kills landed while the run was writing.
    expect(midRun).toBe(5)
  })
})
