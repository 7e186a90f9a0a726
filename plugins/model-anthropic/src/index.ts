import { Context, Service } from 'cordis'
import { skipShadowContexts } from '@cordage/registry/cordis-seam'
import type Schema from 'schemastery'
import type { CompletionRequest, ModelEvent, ModelInfo, ModelService } from '@cordage/services'
import { strictConfig, type ConfigInput } from '@cordage/core'
import { AnthropicClient } from './client.js'
import { Config as ConfigSchema, resolveOptions, type Config as ModelAnthropicConfig } from './config.js'

/** Plugin name. */
export const name = 'model-anthropic'
/** Needs no service. Provides `model` (`ModelService`, declared in `@cordage/services`). */
export const inject: string[] = []

/** Plugin configuration (see the README's Config table). */
export type Config = ModelAnthropicConfig
/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(name, ConfigSchema)

/** The `model` service over the Anthropic Messages API, on the official `@anthropic-ai/sdk`. */
export class AnthropicModel extends Service implements ModelService {
  static readonly inject = inject
  static readonly Config = Config

  readonly id: string
  readonly info: ModelInfo
  /** The underlying Cordis-free client. */
  readonly client: AnthropicClient

  constructor(ctx: Context, config: Config) {
    super(ctx, 'model')
    // Calls never need the caller's context: skip per-call shadow contexts.
    skipShadowContexts(this)
    this.client = new AnthropicClient(resolveOptions(config, process.env))
    this.id = this.client.id
    this.info = this.client.info
    this.stream = this.stream.bind(this)
    ctx.effect(() => () => this.client.close(new Error('the model-anthropic plugin was unloaded')), 'model-anthropic requests')
  }

  /** Streams one completion: text and thinking deltas, thinking blocks, tool calls, then one `done` with usage. */
  stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    return this.client.stream(request)
  }
}

export { AnthropicClient } from './client.js'
export { resolveOptions, type ClientOptions } from './config.js'
export { KNOWN_MODELS, DEFAULT_MODEL } from './models.js'
export { ModelRequestError, type ModelRequestErrorCode } from '@cordage/services'
export default AnthropicModel
