import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
// Types only (erased from dist/): `ctx.tools` is the registry the host application loads.
import type { ToolRegistry } from '@cordage/registry'
import { __camel__Tool } from './__name__.js'

/** Plugin name (also the shorthand `cordage.yml` accepts for this package). */
export const name = '__name__'
/** Services it needs: the tool registry. */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  /** Texts longer than this (in characters) are refused rather than processed. */
  maxCharacters: number
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG naming the plugin and key. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    maxCharacters: Schema.natural().min(1).default(10_000).description('Longer texts are refused with TEXT_TOO_LONG.'),
  }),
)

/** Registers `__tool__`; unloading the plugin unregisters it. */
export function apply(ctx: Context, config: Config): void {
  const tools: ToolRegistry = ctx.tools
  tools.register(__camel__Tool(config))
}

/** The plugin as one object. */
export default { name, inject, Config, apply }
