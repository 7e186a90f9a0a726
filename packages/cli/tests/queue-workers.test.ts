import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deriveMessages, type SessionEventMap } from '@cordage/agent'
import { PostgresSessionStore } from '@cordage/plugin-store-postgres'
import { RunQueue } from '@cordage/queue'
import type { StoredEvent } from '@cordage/services'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { enqueueRun, newRunId } from '../src/queue/enqueue.js'
import { start, waitFor, type Running } from './processes.js'
import { checkEffects, postgresUrl, redisUrl, scriptedPrompt, scriptedTurn, uniqueQueueName, workerYaml } from './queue-fixture.js'

const RUNS = 50
const STEPS = 4

describe.skipIf(!redisUrl || !postgresUrl)('workers on real Redis and PostgreSQL (needs eval "$(bash scripts/services.sh start)")', () => {
  let dir: string
  let model: FakeOpenAIServer
  let store: PostgresSessionStore
  let queue: RunQueue
  const name = uniqueQueueName('workers')
  const workers: Running[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cordage-workers-'))
    model = await startFakeOpenAI([scriptedTurn], { loop: true })
    writeFileSync(join(dir, 'cordage.yml'), workerYaml(model.baseURL, name))
    store = new PostgresSessionStore({ url: postgresUrl!, poolSize: 4 })
    await store.open()
    queue = new RunQueue({ redis: redisUrl!, name })
  })

  afterAll(async () => {
    if (process.env.CORDAGE_QUEUE_TEST_LOGS)
      workers.forEach((worker, index) => writeFileSync(`${process.env.CORDAGE_QUEUE_TEST_LOGS}-${index}.log`, worker.stderr()))
    for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL')
    await queue?.obliterate().catch(() => {})
    await queue?.close()
    await store?.close()
    await model?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('finishes 50 runs across 3 workers while one is killed (-9) and one is stopped (SIGTERM): every effect once, every session replays', async () => {
    const ids = Array.from({ length: RUNS }, (_, index) => `${newRunId()}-${index}`)
    for (let index = 0; index < 3; index++) workers.push(start(['worker', '--concurrency', '3', '--grace', '300'], dir))
    expect(await waitFor(() => workers.every((worker) => worker.stdout().includes('worker ready')), 60_000)).toBe(true)
    const config = workerYaml(model.baseURL, name)
    for (const id of ids) await enqueueRun(store, queue, { id, prompt: scriptedPrompt(id, STEPS), config }, dir)

    const ended = async () => (await store.list({ status: 'ended' })).filter((summary) => ids.includes(summary.header.id)).length
    const holding = (worker: Running) => {
      const started = [...worker.stderr().matchAll(/run (\S+) (?:started|resumed)/g)].map((match) => match[1])
      const left = new Set([...worker.stderr().matchAll(/run (\S+) (?:ended|handed back)/g)].map((match) => match[1]))
      return started.filter((id) => !left.has(id))
    }
    // Kill -9 the first worker while it holds runs, once some runs have finished.
    const [victim, stopped, survivor] = workers
    await waitUntil(async () => (await ended()) >= 5 && holding(victim).length > 0, 120_000)
    victim.child.kill('SIGKILL')
    await victim.exited
    // What it held: started and not left by its own account, and not ended in the store (a run it finished may
    // have been stored before its "ended" line reached us). No other worker takes a run before its lock expires.
    const endedAtKill = new Set((await store.list({ status: 'ended' })).map((summary) => summary.header.id))
    const killedHolding = holding(victim).filter((id) => !endedAtKill.has(id))
    // SIGTERM the second while it holds runs: those past the grace period go back to the queue.
    await waitUntil(async () => (await ended()) >= 15 && holding(stopped).length > 0, 120_000)
    stopped.child.kill('SIGTERM')
    expect((await stopped.exited).code).toBe(0)
    await waitUntil(async () => (await ended()) === RUNS, 240_000)

    const problems: string[] = []
    let interrupted = 0
    for (const id of ids) {
      problems.push(...checkEffects(dir, id, STEPS))
      const { events } = await store.read(id)
      const end = events.at(-1)!
      if (end.type !== 'session/end' || (end.data as { reason: string }).reason !== 'completed') problems.push(`${id}: ended ${JSON.stringify(end)}`)
      problems.push(...replayProblems(id, events, model))
      interrupted += events.filter(
        (event) => event.type === 'tool/result' && (event.data as SessionEventMap['tool/result']).error?.code === 'INTERRUPTED',
      ).length
    }
    expect(problems).toEqual([])
    // The killed worker's runs were resumed elsewhere.
    for (const id of killedHolding) expect(survivor.stderr() + stopped.stderr()).toMatch(new RegExp(`run ${id} resumed`))
    expect(interrupted + killedHolding.length).toBeGreaterThan(0)
    expect(stopped.stderr()).toContain('SIGTERM')
  }, 600_000)
})

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * The stored session derives a valid conversation (every call answered once, in order), and its tool
 * results are the texts the model was sent in the run's last request.
 */
function replayProblems(id: string, events: StoredEvent[], model: FakeOpenAIServer): string[] {
  const messages = deriveMessages(events as never)
  const problems: string[] = []
  const open = new Set<string>()
  const answered = new Set<string>()
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) open.add(call.id)
    if (message.role === 'tool') {
      if (!open.delete(message.callId) || answered.has(message.callId)) problems.push(`${id}: result for ${message.callId} out of place`)
      answered.add(message.callId)
    }
  }
  if (open.size) problems.push(`${id}: calls without results: ${[...open].join(', ')}`)
  const prompt = scriptedPrompt(id, STEPS)
  const last = model.requests.findLast((request) => request.body?.messages?.some((message: any) => message.role === 'user' && message.content === prompt))
  const sent = (last?.body.messages ?? []).filter((message: any) => message.role === 'tool').map((message: any) => message.content)
  const stored = messages.flatMap((message) =>
    message.role === 'tool' ? [message.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')] : [],
  )
  if (JSON.stringify(sent) !== JSON.stringify(stored))
    problems.push(`${id}: the model saw ${JSON.stringify(sent)}, the session replays ${JSON.stringify(stored)}`)
  return problems
}
