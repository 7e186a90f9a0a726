import { readFileSync } from 'node:fs'
import { integerOption, stringOption } from '../args.js'
import { CliConfigError, EXIT, errorMessage } from '../errors.js'
import { MODEL_ENVIRONMENT } from '../model-environment.js'
import type { Command } from './command.js'

/** `cordage worker`: takes queued runs from Redis and runs them, until SIGTERM or Ctrl-C. */
export const workerCommand: Command = {
  name: 'worker',
  summary: 'take queued runs (queue: { redis } in cordage.yml) and run them, storing sessions in PostgreSQL',
  usage: '',
  environment: MODEL_ENVIRONMENT,
  options: {
    concurrency: { type: 'string', description: 'runs held at once (default 1)' },
    grace: { type: 'string', description: 'ms running runs may finish after SIGTERM before going back to the queue (default 10000)' },
  },
  async run(input) {
    const { values, output, cwd, env } = input
    const concurrency = integerOption(values, 'concurrency') ?? 1
    const grace = integerOption(values, 'grace') ?? 10_000
    const [{ readConfig }, { RunWorker }, { JobRunner }, { endStoredRun }, { PostgresSessionStore }, { StopSignals }, { claimWorkerIdentity }] =
      await Promise.all([
        import('../config.js'),
        import('@cordage/queue'),
        import('../queue/job-runner.js'),
        import('../queue/resume.js'),
        import('@cordage/plugin-store-postgres'),
        import('../signals.js'),
        import('../queue/orphans.js'),
      ])
    const config = readConfig(cwd, stringOption(values, 'config'))
    if (!config?.queue) throw new CliConfigError('cordage worker: cordage.yml needs queue: { redis: <redis:// url> }')
    if (!config.store?.postgres) throw new CliConfigError('cordage worker: cordage.yml needs store: { postgres: <postgres:// url> } (runs are resumed from it)')
    let stop!: () => void
    const stopped = new Promise<void>((resolve) => (stop = resolve))
    const signals = new StopSignals((signal, again) => {
      if (again) process.exit(128 + 2)
      output.error(`worker: ${signal}: taking no more runs; running ones have ${grace} ms to finish before they go back to the queue`)
      stop()
    })
    // The store that records runs failed for good (a run that kept killing its workers).
    const endings = new PostgresSessionStore({ url: config.store.postgres, poolSize: 2 })
    // Before any plugin loads: everything this process starts carries its token from here on.
    const identity = claimWorkerIdentity()
    const runner = new JobRunner({ cwd, config, output, env, verbose: !!values.verbose, identity })
    try {
      await endings.open()
      // Plugins load before the first run is taken (runs carrying this same cordage.yml share them).
      await runner.warm(config.file ? readFileSync(config.file, 'utf8') : undefined)
      const worker = new RunWorker(config.queue, {
        concurrency,
        execute: (run) => runner.execute(run),
        onFailed: (id, reason) => endStoredRun(endings, id, { reason: 'error', message: reason }),
        onError: (error) => output.error(output.style('yellow', `worker: ${errorMessage(error)}`)),
        identity,
      })
      await worker.ready()
      output.line(`worker ready: queue ${worker.settings.name}, concurrency ${concurrency}, pid ${process.pid}`)
      await stopped
      await worker.close(grace)
      return EXIT.ok
    } finally {
      await runner.close()
      await endings.close()
      signals.dispose()
    }
  },
}
