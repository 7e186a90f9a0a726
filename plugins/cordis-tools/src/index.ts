import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import type { CodeRunner } from '@cordage/services'
import { inspectTool } from './inspect-tool.js'
import { mountTools } from './mount-tools.js'
import { Mounts } from './mounts.js'

export const name = 'cordis-tools'
export const inject = ['tools']

/** Bounds of mounted code, and which installed packages may be mounted. */
export interface Config {
  timeoutMs: number
  toolTimeoutMs: number
  maxMounts: number
  packages: string[]
  packageApproval: 'ask' | 'allow'
  cwd: string
}

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    timeoutMs: Schema.natural()
      .min(1)
      .default(5000)
      .description(
        'Bound of each call into mounted code that is not a tool body (evaluation, apply, a listener, a timer, a disposer), and the CPU one step of it may use.',
      ),
    toolTimeoutMs: Schema.natural().min(1).default(60_000).description('timeoutMs of mounted tools that declare none.'),
    maxMounts: Schema.natural().min(1).max(64).default(8).description('Mounts of code at once (each holds a sandbox worker thread).'),
    packages: Schema.array(Schema.string())
      .default([])
      .description('Installed packages that cordis_mount { package } may load (trusted code, run in the host).'),
    packageApproval: Schema.union(['ask', 'allow'] as const)
      .default('ask')
      .description("'ask': mounting a package asks the approval service (denied without one); 'allow': no question."),
    cwd: Schema.string().description('Where packages are resolved from (node_modules of it and its parents); default the working directory.'),
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
  const mounts = new Mounts(group, ctx, { ...config, cwd: config.cwd ?? process.cwd() }, logger, {
    tools: ctx.tools,
    codeMode: () => ctx.get('codeMode') as CodeRunner | undefined,
    approval: () => ctx.get('approval'),
  })
  ctx.on('agent/child', (event) => (event.type === 'start' ? mounts.childStarted(event.runId) : void mounts.childEnded(event.runId)))
  ctx.tools.guard(mounts.guard)
  // Before the group fiber goes: each mount's disposers still reach its sandbox, within the bound.
  ctx.effect(() => () => mounts.close(), 'cordis-tools: mounts')
  ctx.tools.register(inspectTool(ctx, mounts))
  for (const tool of mountTools(mounts)) ctx.tools.register(tool)
}

export default { name, inject, Config, apply }
