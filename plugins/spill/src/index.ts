import { rm } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Context, Service } from 'cordis'
import Schema from 'schemastery'
import { strictConfig } from '@cordage/core'
import { createBoundListener } from './bound.js'
import { SpillConfigError } from './errors.js'
import type { SpillService } from '@cordage/services'
import { SpillStore, type SpillInput, type SpillSaved } from './store.js'

/** The `spill` service: a private file store plus the generic bounding policy on `tools/present`. */
export class Spill extends Service implements SpillService {
  static readonly inject = ['tools']
  static readonly Config: Schema<Partial<Spill.Config>, Spill.Config> = strictConfig(
    'spill',
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

  /** The absolute spill directory. */
  readonly dir: string
  private readonly store: SpillStore

  constructor(ctx: Context, input: Spill.Config) {
    super(ctx, 'spill')
    const config = { ...input, ...previewSizes(input) }
    if (config.headBytes + config.tailBytes >= config.maxInlineBytes) {
      throw new SpillConfigError(
        `spill: headBytes (${config.headBytes}) + tailBytes (${config.tailBytes}) must be less than maxInlineBytes (${config.maxInlineBytes}) to leave room for the notice`,
      )
    }
    this.dir = resolve(config.dir)
    const store = (this.store = new SpillStore(this.dir))
    const logger = ctx.logger('spill')
    const listener = createBoundListener({ ...config, save: (input) => store.save(input), warn: (message) => logger.warn(message) })
    ctx.on('tools/present', listener, true)
    ctx.effect(
      () => async () => {
        await store.close()
        if (config.deleteOnDispose) await Promise.all(store.written.map((path) => rm(path, { force: true })))
      },
      'spill store',
    )
  }

  /** Writes `text` to a new private file (0600, in the 0700 spill directory) and returns its path and size. */
  save(input: SpillInput): Promise<SpillSaved> {
    return this.store.save(input)
  }
}

/**
 * Head and tail sizes: each one left unset takes its share (1/2, 2/5) of `maxInlineBytes`, reduced so the
 * pair still leaves a tenth for the notice beside an explicitly set other, so a lone `maxInlineBytes` loads.
 */
function previewSizes(config: Spill.Config): { headBytes: number; tailBytes: number } {
  const max = config.maxInlineBytes
  const room = (other: number | undefined) => Math.max(0, max - Math.ceil(max / 10) - (other ?? 0))
  const headBytes = config.headBytes ?? Math.min(Math.floor(max / 2), room(config.tailBytes ?? Math.floor((max * 2) / 5)))
  const tailBytes = config.tailBytes ?? Math.min(Math.floor((max * 2) / 5), room(headBytes))
  return { headBytes, tailBytes }
}

export declare namespace Spill {
  interface Config {
    maxInlineBytes: number
    /** Default: half of `maxInlineBytes`. */
    headBytes?: number
    /** Default: two fifths of `maxInlineBytes`. */
    tailBytes?: number
    dir: string
    skipTools: string[]
    deleteOnDispose: boolean
  }
}

export default Spill
export type { SpillInput, SpillSaved, SpillService } from '@cordage/services'
export { SpillStoreError, SpillConfigError } from './errors.js'
