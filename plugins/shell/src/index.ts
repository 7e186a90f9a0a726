import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ToolRegistry } from '@cordage/registry'
import type { JobsService, SpillService } from '@cordage/services'
import { ConfigError, envFilter, envPolicySchema, strictConfig, type EnvPolicy, type ConfigInput } from '@cordage/core'
import { bashTool } from './bash.js'
import { resolveRoot } from './cwd.js'
import type { RunningCommand } from './run.js'

/** Plugin name. */
export const name = 'shell'
/** Registers `bash`; background commands become jobs when `jobs` is loaded. */
export const inject = ['tools']

/** Shell plugin configuration (see the README for the defaults and their reasons). */
export interface Config {
  root?: string
  shell: string
  defaultTimeoutMs: number
  maxTimeoutMs: number
  maxOutputBytes: number
  maxSpillBytes: number
  killGraceMs: number
  env: EnvPolicy
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    root: Schema.string().description('Workspace root; `cwd` must stay inside it. Default: process.cwd() at load.'),
    shell: Schema.string().default('bash').description('Shell binary, run as `<shell> -c <command>`.'),
    defaultTimeoutMs: Schema.natural().min(1).default(120_000).description('Foreground timeout when the call gives none.'),
    maxTimeoutMs: Schema.natural().min(1).default(600_000).description('Largest timeout_ms a call may ask for.'),
    maxOutputBytes: Schema.natural().min(3).default(30_000).description('Bytes kept per stream (a third head, the rest tail).'),
    maxSpillBytes: Schema.natural()
      .default(64 << 20)
      .description('Bytes of a longer stream kept whole in a spill file (with the spill plugin).'),
    killGraceMs: Schema.natural().default(2_000).description('Time between SIGTERM and SIGKILL when killing the processes of a command.'),
    env: envPolicySchema('commands'),
  }),
)

/** Registers `bash` rooted at `config.root`; unloading kills every command it started. */
export function apply(ctx: Context, config: Config): void {
  if (config.defaultTimeoutMs > config.maxTimeoutMs) {
    throw new ConfigError(name, [
      { path: '', message: `config.defaultTimeoutMs (${config.defaultTimeoutMs}) exceeds config.maxTimeoutMs (${config.maxTimeoutMs})` },
    ])
  }
  const root = resolveRoot(config.root)
  const running = new Set<RunningCommand>()
  // Foreground commands die with the plugin; background ones are jobs owned by it (killed by their effects).
  ctx.effect(() => () => Promise.all([...running].map((command) => command.stop())).then(() => {}), 'shell: kill running commands')
  const filter = envFilter(config.env)
  const logger = ctx.logger('shell')
  const tools: ToolRegistry = ctx.tools
  tools.register(
    bashTool({
      root,
      shell: config.shell,
      defaultTimeoutMs: config.defaultTimeoutMs,
      maxTimeoutMs: config.maxTimeoutMs,
      maxOutputBytes: config.maxOutputBytes,
      maxSpillBytes: config.maxSpillBytes,
      killGraceMs: config.killGraceMs,
      env: () => filter(process.env),
      jobs: () => ctx.get('jobs') as JobsService | undefined,
      spill: () => ctx.get('spill') as SpillService | undefined,
      warn: (message) => logger.warn(message),
      running,
    }),
  )
}

export type { ForegroundValue } from './foreground.js'
export { ShellSpawnError, ShellCwdError, JobsUnavailableError } from './errors.js'

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
