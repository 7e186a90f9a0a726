import { createRequire } from 'node:module'
import { errorMessage } from '@cordage/core'

type Api = typeof import('@opentelemetry/api')

/**
 * @opentelemetry/api, loaded as CommonJS: its ES module build (picked under a `module` resolve condition, as
 * the benchmarks run Node) imports its files without extensions and does not load. Where it cannot load at
 * all, traces are not propagated and runs go on.
 */
function loadApi(): Api | undefined {
  const require = createRequire(import.meta.url)
  try {
    // Whichever build the resolver picks, its CommonJS build sits beside it in build/src.
    const entry = require.resolve('@opentelemetry/api')
    const build = entry.lastIndexOf('/build/')
    return require(build < 0 ? entry : `${entry.slice(0, build)}/build/src/index.js`) as Api
  } catch {
    return undefined
  }
}

const api = loadApi()

/** The active trace context as a carrier (`traceparent`, `tracestate`); empty without a registered propagator. */
export function injectTrace(): Record<string, string> {
  const carrier: Record<string, string> = {}
  api?.propagation.inject(api.context.active(), carrier)
  return carrier
}

/** Runs `work` inside the trace context of `carrier`, so spans started there continue the enqueuer's trace. */
export function withTrace<T>(carrier: Record<string, string> | undefined, work: () => T): T {
  return api ? api.context.with(api.propagation.extract(api.ROOT_CONTEXT, carrier ?? {}), work) : work()
}

/**
 * Runs `work` (adding run `id` to queue `queue`) inside a producer span named as the OpenTelemetry messaging
 * conventions name a send, `send <queue>`: the job carries that span's context, so the worker's
 * `invoke_agent` span is its child and the trace starts at the enqueuer even when it had no span of its own
 * (a command, an HTTP request nobody traced). Without a registered tracer provider the span records nothing.
 */
export async function withEnqueueSpan<T>(queue: string, id: string, work: () => Promise<T>): Promise<T> {
  if (!api) return work()
  const tracer = api.trace.getTracer('@cordage/queue')
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.name': 'send',
    'messaging.operation.type': 'send',
    'messaging.destination.name': queue,
    'messaging.message.id': id,
    'gen_ai.conversation.id': id,
  }
  return tracer.startActiveSpan(`send ${queue}`, { kind: api.SpanKind.PRODUCER, attributes }, async (span) => {
    try {
      return await work()
    } catch (error) {
      span.recordException(error as Error)
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorMessage(error) })
      throw error
    } finally {
      span.end()
    }
  })
}
