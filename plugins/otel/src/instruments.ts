import { createNoopMeter, metrics, type Attributes, type Histogram } from '@opentelemetry/api'
import {
  METRIC_GEN_AI_CLIENT_OPERATION_DURATION,
  METRIC_GEN_AI_CLIENT_TOKEN_USAGE,
  METRIC_TOOL_CALLS,
  METRIC_TOOL_DURATION,
  OPERATION_DURATION_BUCKETS,
  TOKEN_USAGE_BUCKETS,
} from './semconv.js'

/** The plugin's instruments, from the global meter provider (no-ops while none is registered). */
export interface Instruments {
  /** `gen_ai.client.token.usage` `{token}`, by `gen_ai.token.type` (input, output). */
  tokenUsage: Histogram
  /** `gen_ai.client.operation.duration` in seconds, per model request. */
  operationDuration: Histogram
  /** `cordage.tool.duration` in seconds, by tool and outcome. */
  toolDuration: Histogram
}

/**
 * Creates the instruments on the global meter provider. Tool call counts are kept here, one number per
 * tool and outcome, and read by the SDK when it collects (`cordage.tool.calls`, an observable counter):
 * an SDK counter's `add` hashes its attributes on every call, which would cost more than a second.
 */
export function createInstruments(scope: string, counts: ToolCounts): Instruments {
  const meter = metrics.getMeter(scope)
  meter
    .createObservableCounter(METRIC_TOOL_CALLS, { unit: '{call}', description: 'Tool calls, by tool and outcome.' })
    .addCallback((result) => counts.report((count, attributes) => result.observe(count, attributes)))
  return {
    tokenUsage: meter.createHistogram(METRIC_GEN_AI_CLIENT_TOKEN_USAGE, {
      unit: '{token}',
      description: 'Number of input and output tokens used per model request.',
      advice: { explicitBucketBoundaries: TOKEN_USAGE_BUCKETS },
    }),
    operationDuration: meter.createHistogram(METRIC_GEN_AI_CLIENT_OPERATION_DURATION, {
      unit: 's',
      description: 'Duration of a model request.',
      advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS },
    }),
    toolDuration: meter.createHistogram(METRIC_TOOL_DURATION, {
      unit: 's',
      description: 'Duration of a tool call, admission to result, by tool and outcome.',
      advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS },
    }),
  }
}

/** Per tool and outcome: the attribute set of its measurements (one frozen object) and its call count. */
interface Tally {
  attributes: Attributes
  count: number
}

/** Tool call counts by tool and outcome, and their attribute sets (no allocation per call). */
export class ToolCounts {
  private readonly tallies = new Map<string, Map<string, Tally>>()
  private size = 0

  constructor(
    private readonly names: { tool: string; outcome: string },
    private readonly limit = 1000,
  ) {}

  /** Counts one call; returns the attribute set of its measurements. */
  count(tool: string, outcome: string): Attributes {
    let byOutcome = this.tallies.get(tool)
    let tally = byOutcome?.get(outcome)
    if (!tally) {
      tally = { attributes: Object.freeze({ [this.names.tool]: tool, [this.names.outcome]: outcome }), count: 0 }
      // Tool names are bounded by the registry, but a flood of dynamic tools must not grow this forever:
      // past the limit, further combinations are measured but not counted.
      if (this.size >= this.limit) return tally.attributes
      if (!byOutcome) this.tallies.set(tool, (byOutcome = new Map()))
      byOutcome.set(outcome, tally)
      this.size++
    }
    tally.count++
    return tally.attributes
  }

  /** Hands every count (cumulative) to `observe`. */
  report(observe: (count: number, attributes: Attributes) => void): void {
    for (const byOutcome of this.tallies.values()) for (const tally of byOutcome.values()) observe(tally.count, tally.attributes)
  }
}

const noop = createNoopMeter()
/** Instruments that record nothing, until a meter provider is registered. */
export const NOOP_INSTRUMENTS: Instruments = {
  tokenUsage: noop.createHistogram('noop'),
  operationDuration: noop.createHistogram('noop'),
  toolDuration: noop.createHistogram('noop'),
}
