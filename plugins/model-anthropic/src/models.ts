import type { KnownModel } from '@cordage/services'

/** The default model: a current Claude model with a 1M window. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6'

// Prompt-cache writes (5-minute cache) cost 1.25× input and reads 0.1× input on every model listed.
const price = (input: number, output: number) => ({ input, output, cacheWrite: input * 1.25, cacheRead: input / 10 })

/** Built-in windows and prices (US dollars per million tokens); see the README to add one. */
export const KNOWN_MODELS: readonly KnownModel[] = [
  { name: 'claude-fable-5-1', contextWindow: 1_000_000, price: price(10, 50) },
  { name: 'claude-opus-5-5', contextWindow: 1_000_000, price: price(4, 20) },
  { name: 'claude-opus-5', contextWindow: 1_000_000, price: price(5, 25) },
  { name: 'claude-sonnet-5-5', contextWindow: 1_000_000, price: price(2, 10) },
  { name: 'claude-haiku-5-5', contextWindow: 1_000_000 },
  { name: 'claude-opus-4-6', contextWindow: 1_000_000, price: price(5, 25) },
  { name: 'claude-opus-4-5', contextWindow: 200_000, price: price(5, 25) },
  { name: 'claude-opus-4-1', contextWindow: 200_000, price: price(15, 75) },
  { name: 'claude-sonnet-4-6', contextWindow: 1_000_000, price: price(3, 15) },
  { name: 'claude-sonnet-4-5', contextWindow: 200_000, price: price(3, 15) },
  { name: 'claude-haiku-4-5', contextWindow: 200_000, price: price(1, 5) },
]
