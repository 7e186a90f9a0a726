import { context, metrics, propagation, trace } from '@opentelemetry/api'
import { CliConfigError } from './errors.js'

/** The `otel:` settings the SDK setup reads (the plugin's Config checks the whole section). */
export interface TelemetrySettings {
  serviceName?: string
  endpoint?: string
  protocol?: string
  headers?: Record<string, string>
  metrics?: boolean
  exportIntervalMs?: number
}

/** The SDK the command line set up: flushed and shut down before the process exits. */
export interface Telemetry {
  /** Exports what is buffered, waiting at most `SHUTDOWN_MS`; `warn` hears when the collector did not take it in time. */
  shutdown(warn?: (message: string) => void): Promise<void>
}

/** How long exiting waits for the collector: a collector that is down or slow must not hold the command (the exporter's own timeout is 10 s). */
export const SHUTDOWN_MS = 2000

type Protocol = 'http/protobuf' | 'http/json'

/**
 * Registers an OpenTelemetry SDK (tracer provider with a batch span processor, meter provider with a
 * periodic reader, both exporting OTLP/HTTP) when `otel:` is configured. `cordage.yml` gives defaults;
 * the standard `OTEL_*` variables win over it. Nothing is set up when `OTEL_SDK_DISABLED=true` or when a
 * tracer provider is already registered (an embedding application's own).
 */
export async function startTelemetry(settings: TelemetrySettings, env: NodeJS.ProcessEnv): Promise<Telemetry | undefined> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || hasTracerProvider()) return undefined
  const tracesProtocol = protocolOf(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? settings.protocol)
  const metricsProtocol = protocolOf(env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? settings.protocol)
  // The SDK is loaded only when telemetry is configured: it is most of what `otel:` costs at start.
  const [
    { BatchSpanProcessor, NodeTracerProvider },
    { MeterProvider, PeriodicExportingMetricReader },
    { detectResources, envDetector, resourceFromAttributes },
  ] = await Promise.all([import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/sdk-metrics'), import('@opentelemetry/resources')])
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the environment detector) win over cordage.yml.
  const resource = resourceFromAttributes({ 'service.name': settings.serviceName ?? 'cordage' }).merge(detectResources({ detectors: [envDetector] }))
  const headers = settings.headers ? { headers: settings.headers } : {}
  // An endpoint in the environment (general or per signal) wins: the exporter reads it when given no URL.
  const tracesUrl =
    env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || !settings.endpoint ? {} : { url: signalUrl(settings.endpoint, 'traces') }
  const spanExporter =
    tracesProtocol === 'http/json'
      ? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ ...tracesUrl, ...headers })
      : new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter({ ...tracesUrl, ...headers })
  const tracerProvider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(spanExporter)] })
  // The provider, the AsyncLocalStorage context manager and the W3C trace-context and baggage propagators.
  tracerProvider.register()
  let meterProvider: InstanceType<typeof MeterProvider> | undefined
  if (settings.metrics !== false) {
    const metricsUrl =
      env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT || !settings.endpoint ? {} : { url: signalUrl(settings.endpoint, 'metrics') }
    const metricExporter =
      metricsProtocol === 'http/json'
        ? new (await import('@opentelemetry/exporter-metrics-otlp-http')).OTLPMetricExporter({ ...metricsUrl, ...headers })
        : new (await import('@opentelemetry/exporter-metrics-otlp-proto')).OTLPMetricExporter({ ...metricsUrl, ...headers })
    const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL) > 0 ? Number(env.OTEL_METRIC_EXPORT_INTERVAL) : (settings.exportIntervalMs ?? 60_000)
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: interval, exportTimeoutMillis: Math.min(interval, 30_000) }),
      ],
    })
    metrics.setGlobalMeterProvider(meterProvider)
  }
  return {
    async shutdown(warn) {
      // Export what is buffered before the process goes, for a bounded time.
      let timer: NodeJS.Timeout | undefined
      const flushed = await Promise.race([
        Promise.allSettled([tracerProvider.shutdown(), meterProvider?.shutdown()]).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), SHUTDOWN_MS))),
      ])
      clearTimeout(timer)
      if (!flushed) warn?.(`the telemetry collector did not take the last spans and metrics within ${SHUTDOWN_MS} ms; they are dropped`)
      trace.disable()
      metrics.disable()
      context.disable()
      propagation.disable()
    },
  }
}

function protocolOf(value: string | undefined): Protocol {
  const protocol = value?.trim() || 'http/protobuf'
  if (protocol === 'http/protobuf' || protocol === 'http/json') return protocol
  throw new CliConfigError(
    `otel: protocol "${protocol}" is not supported; use http/protobuf or http/json (OTEL_EXPORTER_OTLP_PROTOCOL or otel.protocol in cordage.yml)`,
  )
}

/** `<endpoint>/v1/<signal>`, as the OTLP exporters derive it from OTEL_EXPORTER_OTLP_ENDPOINT. */
function signalUrl(endpoint: string, signal: 'traces' | 'metrics'): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/${signal}`
}

/** Whether a tracer provider is registered already (an application embedding the command line). */
function hasTracerProvider(): boolean {
  const provider = trace.getTracerProvider() as { getDelegate?: () => object }
  const delegate = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider
  return delegate.constructor.name !== 'NoopTracerProvider'
}
