import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { RunQueue } from '@cordage/queue'
import type { FakeOpenAIRequest, FakeReply } from '@cordage/testing'
import type { Running } from './processes.js'

/** The services the queue tests need (`eval "$(bash scripts/services.sh start)"`); they skip without them. */
export const redisUrl = process.env.CORDAGE_TEST_REDIS_URL
export const postgresUrl = process.env.CORDAGE_TEST_POSTGRES_URL

/** A queue name of this test run alone, so parallel runs of the suite never take each other's runs. */
export function uniqueQueueName(label: string): string {
  return `test-${label}-${process.pid}-${Math.random().toString(16).slice(2, 8)}`
}

/** The cordage.yml of a worker: the default preset, the fake model, PostgreSQL, and a queue that notices a dead worker in seconds. */
export function workerYaml(baseURL: string, queue: string, extra = ''): string {
  return [
    `model: { baseURL: "${baseURL}", model: fake-model }`,
    `store: { postgres: "${postgresUrl}" }`,
    `queue: { redis: "${redisUrl}", name: ${queue}, lockDuration: 4000, stalledInterval: 1000, attempts: 5 }`,
    extra,
  ].join('\n')
}

/** Step `k` of scripted run `run`: odd steps append one line with bash (slowly, so kills land mid-call), even steps write a file. */
export function stepCall(run: string, step: number, guarded: boolean): { name: string; arguments: Record<string, string> } {
  // After an interrupted call the model checks the effect before doing it again, as the error text asks
  // (a write in the checking form is a shell test, since the write tool refuses a file this session never read).
  if (step % 2 === 0) {
    const path = `out/${run}/write-${step}.txt`
    if (guarded) return { name: 'bash', arguments: { command: `mkdir -p out/${run} && { [ -s ${path} ] || echo "${run} ${step}" > ${path}; }` } }
    return { name: 'write', arguments: { path, content: `${run} ${step}\n` } }
  }
  const file = `out/${run}/bash-${step}.txt`
  const append = `mkdir -p out/${run} && echo "${run} ${step}" >> ${file}`
  return { name: 'bash', arguments: { command: guarded ? `sleep 0.2; [ -s ${file} ] || { ${append}; }` : `sleep 0.2; ${append}` } }
}

/** `run <id> steps <n>`: the prompt of a scripted run. */
export function scriptedPrompt(run: string, steps: number): string {
  return `run ${run} steps ${steps}`
}

/**
 * The scripted model, a function of the conversation alone (any worker may serve any turn): the next step
 * is the number of tool results that succeeded; after a failed one (interrupted, aborted) that step is
 * asked again in its checking form; after the last step it answers with text.
 */
export function scriptedTurn(request: FakeOpenAIRequest): FakeReply {
  const messages: Array<{ role: string; content?: unknown }> = request.body?.messages ?? []
  const prompt = String(messages.find((message) => message.role === 'user')?.content ?? '')
  const match = /^run (\S+) steps (\d+)$/.exec(prompt)
  if (!match) return { text: `unscripted prompt: ${prompt}` }
  const [, run, steps] = match
  const results = messages.filter((message) => message.role === 'tool').map((message) => String(message.content))
  const done = results.filter((text) => !text.startsWith('Error:')).length
  if (done >= Number(steps)) return { text: `run ${run} done` }
  const failedLast = results.length > 0 && results.at(-1)!.startsWith('Error:')
  const call = stepCall(run, done, failedLast)
  return { toolCalls: [{ id: `call-${run}-${done}-${results.length}`, name: call.name, arguments: JSON.stringify(call.arguments) }] }
}

/** What each scripted step left in `dir`: problems found (a missing effect, an effect repeated). */
export function checkEffects(dir: string, run: string, steps: number): string[] {
  const problems: string[] = []
  for (let step = 0; step < steps; step++) {
    const file = join(dir, step % 2 === 0 ? `out/${run}/write-${step}.txt` : `out/${run}/bash-${step}.txt`)
    if (!existsSync(file)) {
      problems.push(`${run} step ${step}: ${file} is missing`)
      continue
    }
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean)
    if (lines.length !== 1 || lines[0] !== `${run} ${step}`)
      problems.push(`${run} step ${step}: ${JSON.stringify(lines)} (expected exactly one "${run} ${step}")`)
  }
  return problems
}

/** After a test file: kills its `cordage` processes, removes its queue from Redis, closes what else it started and removes `dir`. */
export async function tearDown(
  name: string,
  processes: Array<Running | undefined>,
  closers: Array<{ close(): Promise<void> } | undefined>,
  dir: string | undefined,
): Promise<void> {
  for (const running of processes) if (running && running.child.exitCode === null) running.child.kill('SIGKILL')
  const queue = new RunQueue({ redis: redisUrl!, name })
  await queue.obliterate().catch(() => {})
  await queue.close()
  for (const closer of closers) await closer?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
}

/** Polls `check` until it holds; throws after a minute (a hang detector, not a timing claim). */
export async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('not reached within 60 s')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
