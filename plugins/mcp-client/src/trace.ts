import { context, propagation } from '@opentelemetry/api'

/**
 * The W3C trace context of the call being made (`traceparent`, `tracestate`), for a request's `_meta`,
 * so the server's work joins the caller's trace; undefined when no propagator is registered or no
 * trace is active (the request then goes out exactly as before).
 */
export function traceMeta(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return typeof carrier.traceparent === 'string' ? carrier : undefined
}
