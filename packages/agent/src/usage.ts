import type { ModelPrice, Usage } from './model.js'

/** Usage with every field present: what a run totals. */
export type UsageTotals = Required<Usage>

/** A zeroed total. */
export function emptyUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }
}

/** Adds one request's usage to `total` (missing fields count as 0). */
export function addUsage(total: UsageTotals, usage: Usage): UsageTotals {
  total.inputTokens += usage.inputTokens || 0
  total.outputTokens += usage.outputTokens || 0
  total.cacheReadTokens += usage.cacheReadTokens || 0
  total.cacheWriteTokens += usage.cacheWriteTokens || 0
  total.reasoningTokens += usage.reasoningTokens || 0
  return total
}

/**
 * The cost in US dollars of `usage` at `price` (per million tokens): uncached input at `input`, cache
 * reads at `cacheRead`, cache writes at `cacheWrite` (each defaulting to `input`), output at `output`.
 * `undefined` when the price is unknown: an unknown price is never shown as free.
 */
export function costOf(usage: Usage, price: ModelPrice | undefined): number | undefined {
  if (!price) return undefined
  const read = usage.cacheReadTokens || 0
  const write = usage.cacheWriteTokens || 0
  const uncached = Math.max(0, (usage.inputTokens || 0) - read - write)
  const dollars =
    uncached * price.input + read * (price.cacheRead ?? price.input) + write * (price.cacheWrite ?? price.input) + (usage.outputTokens || 0) * price.output
  return dollars / 1_000_000
}

/** `$0.0123`, or `unknown price` when `cost` is undefined. */
export function formatCost(cost: number | undefined): string {
  if (cost === undefined) return 'unknown price'
  return cost >= 1 ? `$${cost.toFixed(2)}` : cost >= 0.01 ? `$${cost.toFixed(3)}` : `$${cost.toFixed(4)}`
}

const number = (value: number) => value.toLocaleString('en-US')

/** `1,234 in (900 cached, 300 written) · 56 out (20 reasoning)`: the parts that are not 0. */
export function formatUsage(usage: Usage): string {
  const cache = [
    usage.cacheReadTokens ? `${number(usage.cacheReadTokens)} cached` : '',
    usage.cacheWriteTokens ? `${number(usage.cacheWriteTokens)} written` : '',
  ]
    .filter(Boolean)
    .join(', ')
  const reasoning = usage.reasoningTokens ? ` (${number(usage.reasoningTokens)} reasoning)` : ''
  return `${number(usage.inputTokens)} in${cache ? ` (${cache})` : ''} · ${number(usage.outputTokens)} out${reasoning}`
}
