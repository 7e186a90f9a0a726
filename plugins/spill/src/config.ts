import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'

/** Plugin name. */
export const name = 'spill'
/** Bounds results through the registry's presentation phase. Provides `spill` (`SpillService`, declared in `@cordage/services`). */
export const inject = ['tools']

/** Plugin configuration (see the README's Config table). */
export interface Config {
  maxInlineBytes: number
  /** Default: half of `maxInlineBytes`. */
  headBytes?: number
  /** Default: two fifths of `maxInlineBytes`. */
  tailBytes?: number
  dir: string
  skipTools: string[]
  deleteOnDispose: boolean
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    maxInlineBytes: Schema.natural()
      .min(1024)
      .default(50_000)
      .description('Largest text (UTF-8 bytes) a direct result may show inline; preview and notice together stay within it.'),
    headBytes: Schema.natural().description('Bytes of the start of a spilled output kept in the preview (default: half of maxInlineBytes).'),
    tailBytes: Schema.natural().description('Bytes of the end of a spilled output kept in the preview (default: 40% of maxInlineBytes).'),
    dir: Schema.string().default('.cordage/spill').description('Spill directory, resolved against the working directory at load.'),
    skipTools: Schema.array(Schema.string()).default(['read']).description('Tools whose results are never bounded.'),
    deleteOnDispose: Schema.boolean().default(false).description('Delete the files this instance wrote when the plugin unloads.'),
  }),
)
