import type { KnownModel } from '@cordage/services'

/** The default model on OpenAI's API. */
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini'
/** The default on DeepSeek's API (its docs name it; `deepseek-chat` was deprecated on 2026-07-24). */
export const DEFAULT_DEEPSEEK_MODEL = 'deepseek-flash'

/**
 * Built-in windows and prices (US dollars per million tokens). OpenAI bills cached input at `cacheRead`;
 * DeepSeek bills cache hits at `cacheRead` and has peak and off-peak rates: the peak rates are listed, so
 * a cost is an upper bound. See the README to add a model.
 */
export const KNOWN_MODELS: readonly KnownModel[] = [
  { name: 'gpt-4o-mini', contextWindow: 128_000, price: { input: 0.15, output: 0.6, cacheRead: 0.075 } },
  { name: 'gpt-4o', contextWindow: 128_000, price: { input: 2.5, output: 10, cacheRead: 1.25 } },
  { name: 'gpt-4.1', contextWindow: 1_047_576, price: { input: 2, output: 8, cacheRead: 0.5 } },
  { name: 'gpt-4.1-mini', contextWindow: 1_047_576, price: { input: 0.4, output: 1.6, cacheRead: 0.1 } },
  { name: 'gpt-4.1-nano', contextWindow: 1_047_576, price: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
  { name: 'deepseek-flash', contextWindow: 1_000_000, price: { input: 0.3, output: 1.2, cacheRead: 0.006 } },
  { name: 'deepseek-v4-flash', contextWindow: 1_000_000, price: { input: 0.3, output: 1.2, cacheRead: 0.006 } },
  { name: 'deepseek-v4-pro', contextWindow: 1_000_000, price: { input: 1.32, output: 3.96, cacheRead: 0.044 } },
]
