import { createNoopMeter, metrics, ProxyTracerProvider, trace } from '@opentelemetry/api'

// What `@opentelemetry/api` hands out while no provider is registered (module singletons).
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate()
const NOOP_METER = createNoopMeter()

/**
 * Whether a tracer provider is registered globally (`trace.setGlobalTracerProvider`, an SDK's
 * `register()`): without one every span is a no-op.
 */
export function tracerProviderRegistered(): boolean {
  const provider = trace.getTracerProvider() as { getDelegate?: () => unknown }
  const delegate = typeof provider.getDelegate === 'function' ? provider.getDelegate() : provider
  return delegate !== NOOP_TRACER_PROVIDER
}

/**
 * Whether a meter provider is registered globally. A meter taken before that stays a no-op for good
 * (the metrics API has no proxy), so instruments are created only once this is true.
 */
export function meterProviderRegistered(): boolean {
  return metrics.getMeter('@cordage/plugin-otel') !== NOOP_METER
}
