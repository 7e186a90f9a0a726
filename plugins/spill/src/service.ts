import { rm } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Context, Service } from 'cordis'
import { Config, inject } from './config.js'
import { createBoundListener } from './bound.js'
import { SpillConfigError } from './errors.js'
import type { SpillService, SpillWriter } from '@cordage/services'
import { SpillStore, type SpillInput, type SpillSaved } from './store.js'

/** The `spill` service: a private file store plus the generic bounding policy on `tools/present`. */
export class Spill extends Service implements SpillService {
  static readonly inject = inject
  static readonly Config = Config

  /** The absolute spill directory. */
  readonly dir: string
  private readonly store: SpillStore

  constructor(ctx: Context, input: Config) {
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

  /** Opens a new private file to write output into while it arrives (see `SpillService.open`). */
  open(input: Omit<SpillInput, 'text'>): Promise<SpillWriter> {
    return this.store.open(input)
  }
}

/**
 * Head and tail sizes: each one left unset takes its share (1/2, 2/5) of `maxInlineBytes`, reduced so the
 * pair still leaves a tenth for the notice beside an explicitly set other, so a lone `maxInlineBytes` loads.
 */
function previewSizes(config: Config): { headBytes: number; tailBytes: number } {
  const max = config.maxInlineBytes
  const room = (other: number | undefined) => Math.max(0, max - Math.ceil(max / 10) - (other ?? 0))
  const headBytes = config.headBytes ?? Math.min(Math.floor(max / 2), room(config.tailBytes ?? Math.floor((max * 2) / 5)))
  const tailBytes = config.tailBytes ?? Math.min(Math.floor((max * 2) / 5), room(headBytes))
  return { headBytes, tailBytes }
}
