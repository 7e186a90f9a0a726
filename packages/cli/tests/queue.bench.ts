import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { parse as parseYaml } from 'yaml'
import { bench } from 'vitest'
import { Agent, SessionLog, type ModelService } from '@cordage/agent'
import { PostgresSessionStore } from '@cordage/plugin-store-postgres'
import { RunQueue, RunWorker } from '@cordage/queue'
import { compare, startFakeOpenAI } from '@cordage/testing'
import { parseConfig } from '../src/config.js'
import { chooseModel, startModel } from '../src/model.js'
import { Output } from '../src/output.js'
import { JobRunner } from '../src/queue/job-runner.js'
import { enqueueRun, newRunId } from '../src/queue/enqueue.js'
import { startRuntime } from '../src/runtime.js'
import { start, waitFor } from './processes.js'
import { postgresUrl, redisUrl, scriptedPrompt, scriptedTurn, uniqueQueueName, workerYaml } from './queue-fixture.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const quiet = new Output(new Writable({ write: (_chunk, _encoding, done) => done() }), new Writable({ write: (_chunk, _encoding, done) => done() }))

bench.skipIf(!redisUrl || !postgresUrl)(
  'queue overhead per run: enqueue → worker → session/end at a follower, over the same scripted agent run in process',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordage-queue-bench-'))
    const model = await startFakeOpenAI([scriptedTurn], { loop: true })
    const name = uniqueQueueName('bench')
    const yaml = workerYaml(model.baseURL, name)
    writeFileSync(join(dir, 'cordage.yml'), yaml)
    const config = parseConfig(parseYaml(yaml), join(dir, 'cordage.yml'))
    const store = new PostgresSessionStore({ url: postgresUrl!, poolSize: 4 })
    await store.open()
    const queue = new RunQueue(config.queue!)
    // Tools resolve relative paths against the process's directory, as under `cordage worker` (which runs
    // where it is started): both sides write their files in the temporary directory, not the repository.
    const previousCwd = process.cwd()
    process.chdir(dir)
    const runner = new JobRunner({ cwd: dir, config, output: quiet, env: {} })
    await runner.warm(yaml)
    const worker = new RunWorker(config.queue!, { execute: (run) => runner.execute(run) })
    await worker.ready()
    // The same agent in process: its own runtime with the same plugins, model and store.
    const runtime = await startRuntime({ cwd: dir, output: quiet, config })
    const { model: service } = await startModel(runtime, chooseModel(config.model, {}, dir, dir, {}))
    const local = runtime.ctx.get('sessions')!
    try {
      const inProcess = async () => {
        const id = newRunId()
        const log = SessionLog.createIn(local, { id, cwd: dir })
        await log.ready
        const result = await new Agent(runtime.ctx, { model: service as ModelService, session: log }).run(scriptedPrompt(id, 1))
        await log.close({ reason: result.stopReason })
      }
      const queued = async () => {
        const id = newRunId()
        await enqueueRun(store, queue, { id, prompt: scriptedPrompt(id, 1), config: yaml }, dir)
        for await (const event of store.follow(id)) if (event.type === 'session/end') break
      }
      const result = await compare(
        'one scripted run (a write call, two model turns, PostgreSQL store)',
        { name: 'in process', fn: inProcess },
        [{ name: 'through the queue and a worker', fn: queued }],
        { iterations: 5, rounds: 11, warmup: 3, unit: 'ms' },
      )
      const overhead = (result['through the queue and a worker'] - result['in process']) / 1000
      console.log(`  queue overhead ${overhead.toFixed(2)} ms per run (target ≤ 5 ms)`)
    } finally {
      await worker.close(0)
      await runner.close()
      await runtime.dispose()
      await queue.obliterate().catch(() => {})
      await queue.close()
      await store.close()
      await model.close()
      process.chdir(previousCwd)
      rmSync(dir, { recursive: true, force: true })
    }
  },
  once,
)

bench.skipIf(!redisUrl || !postgresUrl)(
  'throughput of scripted runs: 2 worker processes over 1',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cordage-queue-throughput-'))
    const model = await startFakeOpenAI([scriptedTurn], { loop: true })
    const store = new PostgresSessionStore({ url: postgresUrl!, poolSize: 4 })
    await store.open()
    const runs = 30
    const measure = async (workers: number): Promise<number> => {
      const name = uniqueQueueName(`throughput${workers}`)
      const yaml = workerYaml(model.baseURL, name)
      writeFileSync(join(dir, 'cordage.yml'), yaml)
      const children = Array.from({ length: workers }, () => start(['worker', '--concurrency', '4'], dir))
      const queue = new RunQueue({ redis: redisUrl!, name })
      try {
        if (!(await waitFor(() => children.every((child) => child.stdout().includes('worker ready')), 60_000))) throw new Error('workers did not start')
        const ids = Array.from({ length: runs }, (_, index) => `${newRunId()}-${index}`)
        const started = performance.now()
        await Promise.all(ids.map((id) => enqueueRun(store, queue, { id, prompt: scriptedPrompt(id, 3), config: yaml }, dir)))
        await Promise.all(
          ids.map(async (id) => {
            for await (const event of store.follow(id)) if (event.type === 'session/end') break
          }),
        )
        return runs / ((performance.now() - started) / 1000)
      } finally {
        for (const child of children) child.child.kill('SIGTERM')
        await Promise.all(children.map((child) => child.exited))
        await queue.obliterate().catch(() => {})
        await queue.close()
      }
    }
    try {
      const one: number[] = []
      const two: number[] = []
      for (let round = 0; round < 3; round++) {
        one.push(await measure(1))
        two.push(await measure(2))
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]
      console.log(`\n${runs} scripted runs (3 bash/write calls each), 3 rounds alternating`)
      console.log(`  1 worker:  ${median(one).toFixed(2)} runs/s (rounds ${one.map((value) => value.toFixed(2)).join(', ')})`)
      console.log(`  2 workers: ${median(two).toFixed(2)} runs/s (rounds ${two.map((value) => value.toFixed(2)).join(', ')})`)
      console.log(`  ratio ${(median(two) / median(one)).toFixed(2)}× (target ≥ 1.5×)`)
    } finally {
      await store.close()
      await model.close()
      rmSync(dir, { recursive: true, force: true })
    }
  },
  once,
)
