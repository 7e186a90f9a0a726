import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api'

/** The active trace context as a carrier (`traceparent`, `tracestate`); empty without a registered propagator. */
export function injectTrace(): Record<string, string> {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier
}

/** Runs `work` inside the trace context of `carrier`, so spans started there continue the enqueuer's trace. */
export function withTrace<T>(carrier: Record<string, string> | undefined, work: () => T): T {
  return context.with(propagation.extract(ROOT_CONTEXT, carrier ?? {}), work)
}
