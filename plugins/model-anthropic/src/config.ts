import Schema from 'schemastery'
import { CordageError } from '@cordage/core'
import { configuredPrice, modelInfo, type ModelInfo, type ModelPrice } from '@cordage/services'
import { DEFAULT_MODEL, KNOWN_MODELS } from './models.js'

/** The plugin's config (see the README's table). */
export interface Config {
  model: string
  apiKey?: string
  authToken?: string
  baseURL?: string
  maxTokens: number
  thinking: 'default' | 'adaptive' | 'off' | number
  cache: boolean
  maxRetries: number
  timeoutMs: number
  idleTimeoutMs: number
  temperature?: number
  contextWindow?: number
  price?: Partial<ModelPrice>
  headers: Record<string, string>
  extraBody: Record<string, unknown>
  sdkTelemetry?: boolean
}

const Price = Schema.object({
  input: Schema.number().min(0),
  output: Schema.number().min(0),
  cacheRead: Schema.number().min(0),
  cacheWrite: Schema.number().min(0),
})

/** The schemastery schema Cordis validates the config against before the plugin starts. */
export const Config: Schema<Partial<Config>, Config> = Schema.object({
  model: Schema.string().default(DEFAULT_MODEL).description('Model name, e.g. claude-sonnet-4-6, claude-haiku-4-5.'),
  apiKey: Schema.string().role('secret').description('x-api-key; default env ANTHROPIC_API_KEY.'),
  authToken: Schema.string().role('secret').description('Bearer token instead of a key; default env ANTHROPIC_AUTH_TOKEN.'),
  baseURL: Schema.string().description('API root; default env ANTHROPIC_BASE_URL, else https://api.anthropic.com.'),
  maxTokens: Schema.natural().min(1).default(16_384).description('Sent as max_tokens (thinking included).'),
  thinking: Schema.union([Schema.const('default'), Schema.const('adaptive'), Schema.const('off'), Schema.natural().min(1024)])
    .default('default')
    .description("Extended thinking: default (the model's own), adaptive, off, or a budget in tokens (at least 1024, below maxTokens)."),
  cache: Schema.boolean().default(true).description('Put cache_control breakpoints on the tools, the system prompt and the conversation.'),
  maxRetries: Schema.natural().default(2).description("The SDK's retries of 408/409/429/5xx and connection failures."),
  timeoutMs: Schema.natural().min(1).default(600_000).description('Longest wait for the response headers (the SDK timeout).'),
  idleTimeoutMs: Schema.natural().min(1).default(120_000).description('Longest wait for the next stream event once the response started.'),
  temperature: Schema.number().min(0).max(1),
  contextWindow: Schema.natural().min(1).description('Override the built-in context window (tokens).'),
  price: Price.description('Override the built-in price (US dollars per million tokens).'),
  headers: Schema.dict(String).default({}).description('Extra HTTP headers (e.g. anthropic-beta).'),
  sdkTelemetry: Schema.boolean().description("Let the SDK emit its own OpenTelemetry spans (off: the otel plugin's spans cover model calls)."),
  extraBody: Schema.dict(Schema.any()).default({}).description('Extra request body fields; the keys above win.'),
})

/** Everything the client needs, resolved from config and environment. */
export interface ClientOptions extends Config {
  info: ModelInfo
  /** What to tell the user when the key is rejected or missing. */
  keyHint: string
}

/** Resolves config plus environment; throws `INVALID_CONFIG` for a budget or base URL that cannot work. */
export function resolveOptions(config: Config, env: Record<string, string | undefined>): ClientOptions {
  if (typeof config.thinking === 'number' && config.thinking >= config.maxTokens) {
    throw new CordageError(
      'INVALID_CONFIG',
      `model-anthropic: config.thinking (${config.thinking}) must be below config.maxTokens (${config.maxTokens}): the budget is part of max_tokens`,
    )
  }
  const baseURL = config.baseURL ?? env.ANTHROPIC_BASE_URL
  if (baseURL !== undefined) {
    let url: URL | undefined
    try {
      url = new URL(baseURL)
    } catch {}
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new CordageError('INVALID_CONFIG', `model-anthropic: baseURL ${JSON.stringify(baseURL)} is not an http(s) URL, e.g. https://api.anthropic.com`)
    }
  }
  const apiKey = config.apiKey ?? env.ANTHROPIC_API_KEY
  const authToken = config.authToken ?? (apiKey ? undefined : env.ANTHROPIC_AUTH_TOKEN)
  const keyHint = config.apiKey
    ? 'check config.apiKey'
    : apiKey
      ? 'check the key in ANTHROPIC_API_KEY'
      : authToken
        ? 'check the token in ANTHROPIC_AUTH_TOKEN'
        : 'set ANTHROPIC_API_KEY or config.apiKey'
  const info = modelInfo(KNOWN_MODELS, config.model, { contextWindow: config.contextWindow, price: configuredPrice('model-anthropic', config.price) })
  return { ...config, ...(apiKey && { apiKey }), ...(authToken && { authToken }), ...(baseURL && { baseURL }), info, keyHint }
}
