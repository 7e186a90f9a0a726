import { context, metrics, propagation, trace } from '@opentelemetry/api'
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

export type Encoding = 'protobuf' | 'json'

/** A real SDK as a host registers it: a batch span processor and a metric reader exporting OTLP/HTTP to `url`. */
export interface TestSdk {
  tracerProvider: NodeTracerProvider
  meterProvider: MeterProvider
  /** Exports everything recorded so far. */
  flush(): Promise<void>
  /** Shuts both providers down and unregisters every global the SDK set. */
  shutdown(): Promise<void>
}

export function startSdk(url: string, encoding: Encoding, serviceName = 'otel-test'): TestSdk {
  const resource = resourceFromAttributes({ 'service.name': serviceName })
  const spanExporter = encoding === 'json' ? new JsonTraceExporter({ url: `${url}/v1/traces` }) : new ProtoTraceExporter({ url: `${url}/v1/traces` })
  const metricExporter = encoding === 'json' ? new JsonMetricExporter({ url: `${url}/v1/metrics` }) : new ProtoMetricExporter({ url: `${url}/v1/metrics` })
  const tracerProvider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(spanExporter, { scheduledDelayMillis: 100 })] })
  // Registers the provider, the AsyncLocalStorage context manager and the W3C propagators.
  tracerProvider.register()
  const meterProvider = new MeterProvider({
    resource,
    readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 })],
  })
  metrics.setGlobalMeterProvider(meterProvider)
  return {
    tracerProvider,
    meterProvider,
    async flush() {
      await tracerProvider.forceFlush()
      await meterProvider.forceFlush()
    },
    async shutdown() {
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
      trace.disable()
      metrics.disable()
      context.disable()
      propagation.disable()
    },
  }
}
