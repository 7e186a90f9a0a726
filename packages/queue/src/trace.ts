import { createRequire } from 'node:module'

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
