import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import { trace } from '@opentelemetry/api'
import { onDirect } from '@cordage/registry/cordis-seam'
import { createInstruments, NOOP_INSTRUMENTS } from './instruments.js'
import { meterProviderRegistered, tracerProviderRegistered } from './provider.js'
import { Tracker } from './tracker.js'

/** Plugin name. */
export const name = 'otel'
/** Listens to the registry's pipeline and the agent loop's events. */
export const inject = ['tools']

/** The instrumentation scope of every span and instrument. */
export const SCOPE = '@cordage/plugin-otel'

/** Plugin configuration (see the README's Config table). */
export interface Config {
  /** Record message and tool content (post-policy); else `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`. */
  captureContent?: boolean
  maxContentLength: number
  agentName: string
  /** Read by the command line's SDK setup, not by the plugin: */
  serviceName?: string
  endpoint?: string
  protocol?: 'http/protobuf' | 'http/json'
  headers?: Record<string, string>
  metrics: boolean
  exportIntervalMs: number
}

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG naming the plugin and key. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    captureContent: Schema.boolean().description('Record message and tool content, as the model saw it after every policy decision (default off).'),
    maxContentLength: Schema.natural().min(1).default(16384).description('Characters of one recorded content attribute at most; the rest is cut with a note.'),
    agentName: Schema.string().default('cordage').description('gen_ai.agent.name of top-level runs (child runs are named by their tool: subagent, workflow).'),
    serviceName: Schema.string().description('service.name when the command line sets up the SDK (OTEL_SERVICE_NAME wins).'),
    endpoint: Schema.string().description('OTLP/HTTP base URL when the command line sets up the SDK (OTEL_EXPORTER_OTLP_ENDPOINT wins).'),
    protocol: Schema.union(['http/protobuf', 'http/json']).description('OTLP encoding (OTEL_EXPORTER_OTLP_PROTOCOL wins); default http/protobuf.'),
    headers: Schema.dict(Schema.string()).description('Headers of every export request (OTEL_EXPORTER_OTLP_HEADERS adds to them).'),
    metrics: Schema.boolean().default(true).description('Export metrics too when the command line sets up the SDK.'),
    exportIntervalMs: Schema.natural().min(100).default(60000).description('How often the command line exports metrics (OTEL_METRIC_EXPORT_INTERVAL wins).'),
  }),
)

/**
 * Records spans and metrics through the global OpenTelemetry providers: whoever hosts the agent (the
 * command line, an application with its own SDK) registers them. Until one is registered the plugin
 * stays off the tool call path; it checks again when a run starts.
 */
export function apply(ctx: Context, config: Config): void {
  const captureContent = config.captureContent ?? process.env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.toLowerCase() === 'true'
  const tracker = new Tracker(trace.getTracer(SCOPE), NOOP_INSTRUMENTS, {
    captureContent,
    maxContentLength: config.maxContentLength,
    agentName: config.agentName,
  })
  let tracing = false
  let measuring = false
  const join = () => {
    if (!measuring && meterProviderRegistered()) {
      measuring = true
      tracker.instruments = createInstruments(SCOPE, tracker.counts)
    }
    if (tracing || !(measuring || tracerProviderRegistered())) return
    tracing = true
    // On every tool call: without `ctx.on`'s per-dispatch wrapper (its arguments are plain data).
    onDirect(ctx, 'tools/execute', tracker.aroundBody, true)
    onDirect(ctx, 'tools/result', tracker.onResult)
  }
  join()
  ctx.on('agent/child', tracker.onChild)
  ctx.on('agent/run', (event) => {
    if (event.type === 'start') join()
    tracker.onRun(event)
  })
  ctx.on('agent/request', tracker.onRequest)
  ctx.on('agent/compact', tracker.onCompact)
  ctx.effect(() => () => tracker.close(), 'otel: end open spans')
}

/** The plugin as one object (the module itself is also a valid plugin). */
export default { name, inject, Config, apply }
