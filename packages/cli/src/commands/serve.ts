import { readFileSync } from 'node:fs'
import type { RunLauncher } from '@cordage/server'
import { integerOption, stringOption } from '../args.js'
import type { Runtime } from '../runtime.js'
import { CliError, EXIT, errorMessage } from '../errors.js'
import { MODEL_ENVIRONMENT } from '../model-environment.js'
import type { Command } from './command.js'

/** `cordage serve [--port <n>] [--host <h>]`: the HTTP API (and studio) over the configured store; the first stdout line is the URL. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'serve the HTTP API and the studio: start runs, follow sessions live, answer approvals',
  usage: '[--port <n>] [--host <address>]',
  environment: { ...MODEL_ENVIRONMENT, CORDAGE_SERVE_TOKEN: 'the bearer token every /api request must carry (required for a non-loopback --host)' },
  options: {
    port: { type: 'string', description: 'port to listen on (default 0: a free one)' },
    host: { type: 'string', description: 'address to bind (default 127.0.0.1; any other needs a token)' },
    model: { type: 'string', short: 'm', description: 'model name for runs (default from cordage.yml or the environment)' },
    provider: { type: 'string', description: 'openai or anthropic (default: from the keys set)' },
    'base-url': { type: 'string', description: 'the provider endpoint (default from env or cordage.yml)' },
    'no-key': { type: 'boolean', description: 'send no API key to --base-url' },
    'max-turns': { type: 'string', description: 'turn limit of runs that name none' },
  },
  async run(input) {
    const { values, output, cwd, env } = input
    const rawPort = stringOption(values, 'port') ?? '0'
    const port = Number(rawPort)
    if (!/^\d{1,5}$/.test(rawPort) || port > 65535) throw new CliError(`--port expects a number from 0 to 65535, got ${JSON.stringify(rawPort)}`)
    const host = stringOption(values, 'host') ?? '127.0.0.1'
    const [
      { startRuntime },
      { startServer },
      { studioAssets },
      { chooseModel, startModel },
      { CassetteModel, loadCassette },
      { containStrayErrors },
      { StopSignals },
    ] = await Promise.all([
      import('../runtime.js'),
      import('@cordage/server'),
      import('@cordage/studio'),
      import('../model.js'),
      import('../cassette.js'),
      import('../containment.js'),
      import('../signals.js'),
    ])
    const runtime = await startRuntime({ cwd, configFile: stringOption(values, 'config'), verbose: !!values.verbose, output })
    const release = containStrayErrors(output)
    let stop!: (signal: string) => void
    const stopped = new Promise<string>((resolve) => (stop = resolve))
    const signals = new StopSignals((signal, again) => {
      if (again) process.exit(128 + 2)
      stop(signal)
    })
    let server: Awaited<ReturnType<typeof startServer>> | undefined
    try {
      const flags = {
        model: stringOption(values, 'model'),
        baseURL: stringOption(values, 'base-url'),
        provider: stringOption(values, 'provider'),
        ...(values['no-key'] === true && { noKey: true }),
      }
      // A server with no model still serves sessions and runs started with a cassette.
      try {
        await startModel(runtime, chooseModel(runtime.config.model, flags, cwd, runtime.config.baseDir, env))
      } catch (error) {
        if (flags.model || flags.baseURL || flags.provider) throw error
        output.error(output.style('yellow', `no model: ${errorMessage(error)}; runs need a cassette`))
      }
      const token = env.CORDAGE_SERVE_TOKEN || runtime.config.serve?.token
      const launcher = runtime.config.queue ? await queueLauncher(runtime, cwd, integerOption(values, 'max-turns')) : undefined
      server = await startServer({
        ...(launcher && { launcher }),
        ctx: runtime.ctx,
        cwd,
        host,
        port,
        ...(token && { token }),
        ...(runtime.config.serve?.bodyLimit && { bodyLimit: runtime.config.serve.bodyLimit }),
        assets: studioAssets(),
        local: {
          system: runtime.config.agent.system,
          maxTurns: integerOption(values, 'max-turns') ?? runtime.config.agent.maxTurns,
          ...(runtime.config.agent.durability && { durability: runtime.config.agent.durability }),
          cassette: (file) => new CassetteModel(loadCassette(file)),
        },
      }).catch((error) => {
        throw new CliError(errorMessage(error))
      })
      output.line(server.url)
      output.error(output.style('dim', `cordage serve: sessions in ${runtime.ctx.get('sessions')?.kind ?? 'no'} store; Ctrl-C stops`))
      const signal = await stopped
      output.error(output.style('dim', `\n${signal}: cancelling runs and closing connections`))
      return EXIT.ok
    } finally {
      await server?.close()
      await runtime.dispose()
      signals.dispose()
      release()
    }
  },
}

/** With `queue:` in cordage.yml, runs go to the workers through Redis (the store must be PostgreSQL, which they share). */
async function queueLauncher(runtime: Runtime, cwd: string, maxTurns: number | undefined): Promise<RunLauncher> {
  const { config } = runtime
  if (!config.store?.postgres) throw new CliError('cordage serve: queue: needs store: { postgres: <url> } in cordage.yml (the workers write runs there)')
  const [{ RunQueue }, { QueueRunLauncher }] = await Promise.all([import('@cordage/queue'), import('../queue/launcher.js')])
  const system = config.agent.system
  return new QueueRunLauncher({
    store: runtime.ctx.get('sessions')!,
    queue: new RunQueue(config.queue!),
    cwd,
    ...(config.file && { config: readFileSync(config.file, 'utf8') }),
    defaults: { ...(maxTurns !== undefined && { maxTurns }), ...(system !== undefined && { system }) },
  })
}
