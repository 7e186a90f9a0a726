import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api'

/** What a client's `_meta` may set: the W3C trace context, nothing else a propagator reads (W3C baggage). */
const TRACE_KEYS = ['traceparent', 'tracestate']

/**
 * Runs `fn` in the trace context a request's `_meta` carries (`traceparent`, `tracestate`), so the
 * call's spans continue the client's trace. A request without one, or with one that does not parse,
 * runs as it would have (the propagator ignores what it cannot read). Baggage is not taken: the client
 * is not trusted with values that tools and their own calls would carry on as the host's.
 */
export function withRequestTrace<T>(meta: unknown, fn: () => T): T {
  if (typeof meta !== 'object' || meta === null || typeof (meta as { traceparent?: unknown }).traceparent !== 'string') return fn()
  const carrier = meta as Record<string, unknown>
  const extracted = propagation.extract(ROOT_CONTEXT, carrier, {
    get: (from, key) => (TRACE_KEYS.includes(key) && typeof from[key] === 'string' ? (from[key] as string) : undefined),
    keys: (from) => TRACE_KEYS.filter((key) => typeof from[key] === 'string'),
  })
  return context.with(extracted, fn)
}
