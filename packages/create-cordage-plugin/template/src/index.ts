import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
// Types only (erased from dist/): `ctx.tools` is the registry the host application loads.
import type { ToolRegistry } from '@cordage/registry'
import { __camel__Tool } from './__name__.js'

export const name = '__name__'
export const inject = ['tools']

/** How `__tool__` behaves. */
export interface Config {
  /** Texts longer than this (in characters) are refused rather than processed. */
  maxCharacters: number
}

// strictConfig: a key that is not declared here fails the load, naming the nearest valid key.
export const Config: Schema<Partial<Config>, Config> = strictConfig(
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

export default { name, inject, Config, apply }
