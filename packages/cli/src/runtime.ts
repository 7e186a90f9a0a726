import { Context, type Fiber } from 'cordis'
import { ToolRegistry } from '@cordage/registry'
import { JsonlSessions } from '@cordage/agent'
import { readConfig, type CordageConfig } from './config.js'
import type { Output } from './output.js'
import { configIssues, loadPlugins, resolvePlugins, type ResolvedPlugin } from './plugins.js'
import { CliConfigError } from './errors.js'
import { defaultPreset } from './preset.js'
import { startTelemetry, type Telemetry } from './telemetry.js'

/** How to start a runtime. */
export interface RuntimeOptions {
  /**
   * Where cordage.yml, plugin paths and the JSONL sessions are found. The tool plugins' roots default to
   * the process's directory (their `root` option), so the CLI `chdir`s here before it starts a runtime.
   */
  cwd: string
  /** A config file instead of `<cwd>/cordage.yml`. */
  configFile?: string
  /** A config already parsed (a queued run's cordage.yml); wins over `configFile`. */
  config?: CordageConfig
  /** Where `OTEL_*` settings are read (default `process.env`). */
  env?: NodeJS.ProcessEnv
  verbose?: boolean
  output: Output
}

/** A configured plugin as it is running. */
export interface LoadedPlugin extends ResolvedPlugin {
  fiber: Fiber
}

/** A started Context: the registry and every configured plugin loaded. */
export interface Runtime {
  ctx: Context
  config: CordageConfig
  /** The specs that were loaded, in order. */
  plugins: string[]
  /** The configured plugins as they are running now, in file order (live reload replaces this list). */
  loaded: LoadedPlugin[]
  /** Loads one more plugin as part of this runtime (disposed with it). */
  load(plugin: any, config?: unknown): Promise<Fiber>
  /** Unloads `fiber` with this runtime (for plugins loaded into derived contexts). */
  track(fiber: Fiber): void
  /** Unloads every plugin (tools, listeners, processes, files) in reverse order. */
  dispose(): Promise<void>
}

/** Reads cordage.yml (or the default preset), validates every plugin's config, then loads them in order. */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const config: CordageConfig = options.config ??
    readConfig(options.cwd, options.configFile) ?? { baseDir: options.cwd, plugins: [...defaultPreset], model: {}, agent: {} }
  // A file without `plugins:` (only `model:`, say) still gets the default preset's tools.
  const preset = !config.file || config.plugins === undefined
  const where = preset ? 'default preset' : config.file!.endsWith('/cordage.yml') ? 'cordage.yml' : config.file!
  // Everything is imported and validated before the first plugin starts.
  const resolved = await resolvePlugins(config.plugins ?? [...defaultPreset], config.baseDir, where, { skipPlaceholders: preset })
  const ctx = new Context()
  installLogger(ctx, options.output, options.verbose ?? false)
  // The plugin's config is checked before the SDK starts, so a typo exports nothing.
  // PostgreSQL and OpenTelemetry are loaded only when configured (most runs use neither).
  const Otel = config.otel ? (await import('@cordage/plugin-otel')).default : undefined
  const otelIssues = Otel ? configIssues(Otel, config.otel) : []
  if (otelIssues.length) throw new CliConfigError(otelIssues.map((issue) => `${where}: otel: ${issue}`).join('\n'))
  const telemetry: Telemetry | undefined = config.otel ? await startTelemetry(config.otel, options.env ?? process.env) : undefined
  const registry = await ctx.plugin(ToolRegistry, {})
  // Telemetry comes first, so it sees every call of every plugin loaded after it.
  const otel = Otel ? await ctx.plugin(Otel, config.otel) : undefined
  // The session store comes before the plugins, so whatever starts agents (subagents, workflows) writes there
  // too; without `store:` it is the JSONL files under the working directory, so `ctx.sessions` is always there.
  const store = config.store?.postgres
    ? await ctx.plugin((await import('@cordage/plugin-store-postgres')).default, { url: config.store.postgres })
    : await ctx.plugin(JsonlSessions, { cwd: options.cwd })
  const started = await loadPlugins(ctx, resolved, where)
  // Plugins loaded after the configured ones (the model, the MCP endpoint); unloaded first.
  const fibers: Fiber[] = []
  let disposed = false
  const runtime: Runtime = {
    ctx,
    config,
    plugins: resolved.map((entry) => entry.spec),
    loaded: resolved.map((entry, index) => ({ ...entry, fiber: started[index] })),
    async load(plugin, pluginConfig) {
      const fiber = await ctx.plugin(plugin, pluginConfig)
      fibers.push(fiber)
      return fiber
    },
    track(fiber) {
      fibers.push(fiber)
    },
    async dispose() {
      if (disposed) return
      disposed = true
      for (const fiber of [...fibers.toReversed(), ...runtime.loaded.map((entry) => entry.fiber).toReversed(), store, ...(otel ? [otel] : []), registry])
        await fiber.dispose()
      // Last: the spans of everything above are ended and exported before the process goes.
      await telemetry?.shutdown((message) => options.output.error(`${options.output.style('yellow', 'warn')}: ${message}`))
    },
  }
  return runtime
}

/** Plugin logs go to stderr: warnings and errors always, info with --verbose. */
function installLogger(ctx: Context, output: Output, verbose: boolean): void {
  ctx.logger.exporter({
    colors: false,
    levels: { default: verbose ? 3 : 1 },
    export(message) {
      const text = message.args.map((arg) => (typeof arg === 'string' ? arg : arg instanceof Error ? arg.message : JSON.stringify(arg))).join(' ')
      const level = message.type === 'error' ? output.style('red', 'error') : message.type === 'warn' ? output.style('yellow', 'warn') : message.type
      output.error(`${output.style('dim', `[${message.name}]`)} ${level}: ${text}`)
    },
  })
}
