/** One measured variant of a comparison. */
export interface BenchVariant {
  name: string
  fn: () => unknown | Promise<unknown>
}

export interface CompareOptions {
  /** Calls per round (default 1000). */
  iterations?: number
  /** Interleaved rounds; the median of per-round means is reported (default 15). */
  rounds?: number
  /** Warm-up calls per variant before measuring (default iterations). */
  warmup?: number
  /** Unit for printing: 'us' (default) or 'ms'. */
  unit?: 'us' | 'ms'
}

/** Medians per call, in microseconds, keyed by variant name. */
export type Comparison = Record<string, number>

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * Measures `baseline` and each candidate in interleaved rounds (so machine noise hits all alike),
 * prints median time per call and each candidate's ratio and difference against the baseline.
 */
export async function compare(title: string, baseline: BenchVariant, candidates: BenchVariant[], options: CompareOptions = {}): Promise<Comparison> {
  const iterations = options.iterations ?? 1000
  const rounds = options.rounds ?? 15
  const variants = [baseline, ...candidates]
  for (const variant of variants) for (let i = 0; i < (options.warmup ?? iterations); i++) await variant.fn()
  const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      const start = process.hrtime.bigint()
      for (let i = 0; i < iterations; i++) await variant.fn()
      samples.get(variant.name)!.push(Number(process.hrtime.bigint() - start) / 1000 / iterations)
    }
  }
  const result: Comparison = {}
  for (const [name, values] of samples) result[name] = median(values)
  const scale = options.unit === 'ms' ? 1000 : 1
  const unit = options.unit ?? 'us'
  const base = result[baseline.name]
  const lines = [`\n${title} (median of ${rounds} rounds × ${iterations} calls)`]
  for (const variant of variants) {
    const value = result[variant.name]
    const suffix = variant === baseline ? 'baseline' : `ratio ${(value / base).toFixed(2)}×, overhead ${((value - base) / scale).toFixed(2)} ${unit}/call`
    lines.push(`  ${variant.name.padEnd(48)} ${(value / scale).toFixed(unit === 'ms' ? 3 : 2).padStart(10)} ${unit}/call  ${suffix}`)
  }
  console.log(lines.join('\n'))
  return result
}
