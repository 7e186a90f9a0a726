import { CordageError } from '@cordage/core'
import type { ModelInfo, ModelPrice } from './model.js'

/** A provider's built-in knowledge of one model family: its window and prices (US dollars per million tokens). */
export interface KnownModel {
  /** A model name; dated or suffixed names that start with it (`claude-haiku-4-5-20251001`) match too. */
  name: string
  contextWindow: number
  price?: ModelPrice
}

/**
 * What a provider reports for `model`: the longest built-in name that `model` equals or starts with,
 * overridden field by field by the plugin's own `contextWindow` and `price` config. An unknown model
 * gets no window and no price (costs then show as unknown, never as 0).
 */
export function modelInfo(table: readonly KnownModel[], model: string, overrides: { contextWindow?: number; price?: ModelPrice } = {}): ModelInfo {
  let found: KnownModel | undefined
  for (const known of table) {
    if ((model === known.name || model.startsWith(`${known.name}-`)) && (!found || known.name.length > found.name.length)) found = known
  }
  const contextWindow = overrides.contextWindow ?? found?.contextWindow
  const price = overrides.price ?? found?.price
  return { model, ...(contextWindow !== undefined && { contextWindow }), ...(price && { price }) }
}

/**
 * A provider's configured price: undefined when none of its fields is set; a price without both `input`
 * and `output` throws `INVALID_CONFIG` naming the plugin.
 */
export function configuredPrice(plugin: string, price: Partial<ModelPrice> | undefined): ModelPrice | undefined {
  if (!price || Object.values(price).every((value) => value === undefined)) return undefined
  if (price.input === undefined || price.output === undefined) {
    throw new CordageError('INVALID_CONFIG', `${plugin}: config.price needs both input and output (US dollars per million tokens)`)
  }
  return price as ModelPrice
}
