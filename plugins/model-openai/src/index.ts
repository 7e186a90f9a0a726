import { Context, Service } from 'cordis'
import { skipShadowContexts } from '@cordage/registry/cordis-seam'
import type Schema from 'schemastery'
import type { CompletionRequest, ModelEvent, ModelInfo, ModelService } from '@cordage/services'
import { strictConfig, type ConfigInput } from '@cordage/core'
import { OpenAIClient } from './client.js'
import { Config as ConfigSchema, resolveOptions, type Config as ModelOpenAIConfig } from './config.js'

/** Plugin name. */
export const name = 'model-openai'
/** Needs no service. Provides `model` (`ModelService`, declared in `@cordage/services`). */
export const inject: string[] = []

/** Plugin configuration (see the README's Config table). */
export type Config = ModelOpenAIConfig
/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(name, ConfigSchema)

/** The `model` service over an OpenAI-compatible Chat Completions endpoint (OpenAI, DeepSeek, Ollama, vLLM, llama.cpp). */
export class OpenAIModel extends Service implements ModelService {
  static readonly inject = inject
  static readonly Config = Config

  readonly id: string
  readonly info: ModelInfo
  /** The underlying Cordis-free client (usable on its own, e.g. to record a cassette). */
  readonly client: OpenAIClient

  constructor(ctx: Context, config: Config) {
    super(ctx, 'model')
    // Calls never need the caller's context: skip per-call shadow contexts.
    skipShadowContexts(this)
    this.client = new OpenAIClient(resolveOptions(config, process.env))
    this.id = this.client.id
    this.info = this.client.info
    this.stream = this.stream.bind(this)
    // Unloading stops requests in flight and closes their connections.
    ctx.effect(() => () => this.client.close(new Error('the model-openai plugin was unloaded')), 'model-openai requests')
  }

  /** Streams one completion: text deltas, assembled tool calls, then one `done` with usage. */
  stream(request: CompletionRequest): AsyncIterable<ModelEvent> {
    return this.client.stream(request)
  }
}

export { OpenAIClient, type ClientOptions } from './client.js'
export { resolveOptions } from './config.js'
export { KNOWN_MODELS, DEFAULT_OPENAI_MODEL, DEFAULT_DEEPSEEK_MODEL } from './models.js'
export { ModelRequestError, type ModelRequestErrorCode } from './errors.js'
export type { ImageMode } from './wire.js'
export default OpenAIModel
