import Schema from 'schemastery'
import { CordageError } from '@cordage/core'
import { configuredPrice, modelInfo, type ModelPrice } from '@cordage/services'
import type { ClientOptions } from './client.js'
import { DEFAULT_DEEPSEEK_MODEL, DEFAULT_OPENAI_MODEL, KNOWN_MODELS } from './models.js'
import type { WireOptions } from './wire.js'

/** The plugin's config (see the README's table): the request options plus connection, retry and key settings. */
export interface Config extends Omit<WireOptions, 'model' | 'extraBody' | 'id' | 'reasoningContent' | 'deepseek'> {
  baseURL: string
  apiKey?: string
  /** Send no key even when one is in the environment (a keyless server that must not receive it). */
  noKey?: boolean
  reasoningContent: 'auto' | 'always' | 'never'
  contextWindow?: number
  price?: Partial<ModelPrice>
  model?: string
  maxRetries: number
  timeoutMs: number
  backoffMs: number
  maxRetryDelayMs: number
  headers: Record<string, string>
  extraBody: Record<string, unknown>
}

/** The schemastery schema Cordis validates the config against before the plugin starts. */
export const Config: Schema<Partial<Config>, Config> = Schema.object({
  baseURL: Schema.string()
    .default('https://api.openai.com/v1')
    .description('API root including its prefix, e.g. https://api.deepseek.com/v1, http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM).'),
  apiKey: Schema.string()
    .role('secret')
    .description('Bearer key; default env OPENAI_API_KEY (DEEPSEEK_API_KEY first for api.deepseek.com). None is sent when unset.'),
  noKey: Schema.boolean().description('Send no key even if OPENAI_API_KEY or DEEPSEEK_API_KEY is set (keyless local or LAN servers).'),
  model: Schema.string().description('Model name; default gpt-4o-mini (deepseek-flash for api.deepseek.com).'),
  reasoningContent: Schema.union(['auto', 'always', 'never'] as const)
    .default('auto')
    .description('Send reasoning_content back on assistant turns with tool calls: auto (for *.deepseek.com and models that returned it), always, never.'),
  contextWindow: Schema.natural().min(1).description('Override the built-in context window (tokens).'),
  price: Schema.object({
    input: Schema.number().min(0),
    output: Schema.number().min(0),
    cacheRead: Schema.number().min(0),
    cacheWrite: Schema.number().min(0),
  }).description('Override the built-in price (US dollars per million tokens).'),
  maxRetries: Schema.natural().default(2).description('Extra attempts on 408/409/429/5xx, timeouts and network failures before any event was streamed.'),
  timeoutMs: Schema.natural().min(1).default(120_000).description('Longest wait for the response headers and for each next piece of the stream.'),
  backoffMs: Schema.natural().default(500).description('First retry delay; doubles per attempt (±25% jitter).'),
  maxRetryDelayMs: Schema.natural().default(30_000).description('Cap on any retry delay, including a server Retry-After.'),
  temperature: Schema.number().min(0).max(2),
  topP: Schema.number().min(0).max(1),
  maxTokens: Schema.natural().min(1).description('Sent as max_tokens.'),
  seed: Schema.natural(),
  stop: Schema.array(String),
  parallelToolCalls: Schema.boolean().description('Sent as parallel_tool_calls when set and tools are offered.'),
  stream: Schema.boolean().default(true).description('Use SSE streaming; false sends one non-streaming request per turn.'),
  includeUsage: Schema.boolean().default(true).description('Ask for a usage chunk (stream_options.include_usage).'),
  images: Schema.union(['omit', 'attach'] as const)
    .default('omit')
    .description('Image blocks in tool results: omit (a note in the tool text) or attach (a user message with image_url parts, for vision models).'),
  headers: Schema.dict(String).default({}).description('Extra HTTP headers (e.g. OpenRouter attribution).'),
  extraBody: Schema.dict(Schema.any()).default({}).description('Extra request body fields for provider-specific options.'),
})

/** Resolves config plus environment into client options; throws `INVALID_CONFIG` for a base URL that cannot work. */
export function resolveOptions(config: Config, env: Record<string, string | undefined>): ClientOptions {
  let url: URL
  try {
    url = new URL(config.baseURL)
  } catch {
    throw new CordageError(
      'INVALID_CONFIG',
      `model-openai: config.baseURL ${JSON.stringify(config.baseURL)} is not a URL; write it with its scheme, e.g. http://localhost:11434/v1`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CordageError(
      'INVALID_CONFIG',
      `model-openai: config.baseURL ${JSON.stringify(config.baseURL)} must start with http:// or https://, e.g. http://localhost:11434/v1`,
    )
  }
  const deepseek = url.hostname === 'deepseek.com' || url.hostname.endsWith('.deepseek.com')
  const envName = deepseek ? 'DEEPSEEK_API_KEY' : 'OPENAI_API_KEY'
  const apiKey = config.noKey ? undefined : config.apiKey || env[envName] || (deepseek ? env.OPENAI_API_KEY : undefined) || undefined
  let keyHint = config.apiKey
    ? 'check config.apiKey'
    : apiKey
      ? `check the key in ${env[envName] ? envName : 'OPENAI_API_KEY'}`
      : `set config.apiKey or ${envName}`
  if (!apiKey && !deepseek && env.DEEPSEEK_API_KEY) keyHint += ' (DEEPSEEK_API_KEY is set: for DeepSeek use baseURL https://api.deepseek.com/v1)'
  if (config.noKey) keyHint = 'the server wants a key: remove noKey and set config.apiKey or ' + envName
  const model = config.model || (deepseek ? DEFAULT_DEEPSEEK_MODEL : DEFAULT_OPENAI_MODEL)
  const { price: _price, contextWindow: _window, noKey: _noKey, ...rest } = config
  return {
    ...rest,
    baseURL: config.baseURL.replace(/\/+$/, ''),
    apiKey,
    keyHint,
    model,
    deepseek,
    info: modelInfo(KNOWN_MODELS, model, { contextWindow: config.contextWindow, price: configuredPrice('model-openai', config.price) }),
  }
}
