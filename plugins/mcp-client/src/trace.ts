import { context, propagation } from '@opentelemetry/api'

/**
 * The W3C trace context of the call being made (`traceparent`, `tracestate`), for a request's `_meta`,
 * so the server's work joins the caller's trace; undefined when no propagator is registered or no
 * trace is active (the request then goes out exactly as before).
 */
export function traceMeta(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  if (typeof carrier.traceparent !== 'string') return undefined
  // Only the trace context: what else a propagator writes (W3C baggage: user or tenant ids) is not the server's to see.
  return typeof carrier.tracestate === 'string' ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent }
}
