import Schema from 'schemastery'
import { bench } from 'vitest'
import { metrics, trace } from '@opentelemetry/api'
import { ExportResultCode } from '@opentelemetry/core'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { defineTool } from '@cordage/core'
import { compare, createTestContext } from '@cordage/testing'
import otel from '../src/index.js'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const ITERATIONS = 2000
const ROUNDS = 15

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: Schema.object({ n: Schema.number() }),
  output: { schema: Schema.object({ ok: Schema.boolean().required() }), render: () => [{ type: 'text', text: 'ok' }] },
  execute: () => ({ ok: true }),
})

/** Exports nothing: the figures are the instrumentation's and the SDK's cost, not a collector's. */
const discardSpans: SpanExporter = { export: (_spans, done) => done({ code: ExportResultCode.SUCCESS }), shutdown: async () => {} }
const discardMetrics: PushMetricExporter = {
  export: (_metrics, done) => done({ code: ExportResultCode.SUCCESS }),
  forceFlush: async () => {},
  shutdown: async () => {},
}

async function dispatcher(withPlugin: boolean) {
  const ctx = await createTestContext()
  ctx.tools.register(noop)
  if (withPlugin) await ctx.plugin(otel, {})
  const { execute } = ctx.get('tools')!
  const args = { n: 1 }
  return () => execute({ name: 'noop', arguments: args, agent: 'bench' })
}

/** Process CPU time per call, medians of interleaved rounds: far less sensitive to other load than wall time. */
async function cpuMedians(variants: { name: string; fn: () => unknown }[]): Promise<Record<string, number>> {
  const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      const start = process.cpuUsage()
      for (let i = 0; i < ITERATIONS; i++) await variant.fn()
      const used = process.cpuUsage(start)
      samples.get(variant.name)!.push((used.user + used.system) / ITERATIONS)
    }
  }
  return Object.fromEntries([...samples].map(([name, values]) => [name, values.sort((a, b) => a - b)[values.length >> 1]!]))
}

bench(
  'otel: added cost per tool call',
  async () => {
    // 1. `@opentelemetry/api` only, no provider registered.
    const bare = { name: 'no plugin', fn: await dispatcher(false) }
    const apiOnly = { name: 'plugin, no provider registered', fn: await dispatcher(true) }
    const wallApi = await compare('tool call, no provider', bare, [apiOnly], { iterations: ITERATIONS, rounds: ROUNDS })
    const cpuApi = await cpuMedians([bare, apiOnly])

    // 2. A real SDK: NodeTracerProvider with a BatchSpanProcessor, and a MeterProvider with a periodic reader.
    const tracerProvider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(discardSpans)] })
    tracerProvider.register()
    const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: discardMetrics, exportIntervalMillis: 60_000 })] })
    metrics.setGlobalMeterProvider(meterProvider)
    try {
      const sdk = { name: 'plugin, SDK with batch processor', fn: await dispatcher(true) }
      const wallSdk = await compare('tool call, real SDK', bare, [sdk], { iterations: ITERATIONS, rounds: ROUNDS })
      const cpuSdk = await cpuMedians([bare, sdk])
      const over = (result: Record<string, number>, name: string) => (result[name]! - result[bare.name]!).toFixed(2)
      console.log(
        [
          `  no provider registered: +${over(wallApi, apiOnly.name)} µs wall, +${over(cpuApi, apiOnly.name)} µs CPU per call over no plugin (${cpuApi[bare.name]!.toFixed(2)} µs CPU) (target ≤ 0.5 µs)`,
          `  real SDK, batch processor: +${over(wallSdk, sdk.name)} µs wall, +${over(cpuSdk, sdk.name)} µs CPU per call over no plugin (${cpuSdk[bare.name]!.toFixed(2)} µs CPU) (target ≤ 5 µs)`,
        ].join('\n'),
      )
    } finally {
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
      trace.disable()
      metrics.disable()
    }
  },
  once,
)
