import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import { inspectTool } from './inspect-tool.js'
import { mountTools } from './mount-tools.js'
import { Mounts } from './mounts.js'

export const name = 'cordis-tools'
export const inject = ['tools']

/** Limits of mounted code. */
export interface Config {
  timeoutMs: number
}

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    timeoutMs: Schema.natural()
      .min(1)
      .default(5000)
      .description('How long the synchronous part of mounted code may run (evaluation, apply, each listener or tool call) before it is stopped.'),
  }),
)

/**
 * Registers `cordis_inspect`, `cordis_mount` and `cordis_unmount`. Every mount is a child of one group
 * fiber under this plugin, so unloading it removes every mount and all they registered.
 */
export async function apply(ctx: Context, config: Config): Promise<void> {
  let group!: Context
  await ctx.plugin({ name: 'cordis-dynamic', apply: (inner: Context) => void (group = inner) })
  const logger = ctx.logger('cordis-tools')
  const mounts = new Mounts(group, config.timeoutMs, { info: (text) => logger.info(text), warn: (text) => logger.warn(text) })
  ctx.tools.register(inspectTool(ctx, mounts))
  for (const tool of mountTools(mounts)) ctx.tools.register(tool)
}

export default { name, inject, Config, apply }
