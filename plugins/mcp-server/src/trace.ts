import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api'

/**
 * Runs `fn` in the trace context a request's `_meta` carries (`traceparent`, `tracestate`), so the
 * call's spans continue the client's trace. A request without one, or with one that does not parse,
 * runs as it would have (the propagator ignores what it cannot read).
 */
export function withRequestTrace<T>(meta: unknown, fn: () => T): T {
  if (typeof meta !== 'object' || meta === null || typeof (meta as { traceparent?: unknown }).traceparent !== 'string') return fn()
  const carrier = meta as Record<string, unknown>
  const extracted = propagation.extract(ROOT_CONTEXT, carrier, {
    get: (from, key) => (typeof from[key] === 'string' ? (from[key] as string) : undefined),
    keys: (from) => Object.keys(from),
  })
  return context.with(extracted, fn)
}
