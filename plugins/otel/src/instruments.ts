import { createNoopMeter, metrics, type Attributes, type Counter, type Histogram } from '@opentelemetry/api'
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
  /** `cordage.tool.calls`: tool calls by tool and outcome. */
  toolCalls: Counter
  /** `cordage.tool.duration` in seconds, by tool and outcome. */
  toolDuration: Histogram
}

export function createInstruments(scope: string): Instruments {
  const meter = metrics.getMeter(scope)
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
    toolCalls: meter.createCounter(METRIC_TOOL_CALLS, { unit: '{call}', description: 'Tool calls, by tool and outcome.' }),
    toolDuration: meter.createHistogram(METRIC_TOOL_DURATION, {
      unit: 's',
      description: 'Duration of a tool call, admission to result, by tool and outcome.',
      advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS },
    }),
  }
}

/** Attribute sets of tool metrics, one frozen object per tool and outcome (no allocation per call). */
export class ToolAttributes {
  private readonly cache = new Map<string, Map<string, Attributes>>()
  private size = 0

  constructor(
    private readonly names: { tool: string; outcome: string },
    private readonly limit = 1000,
  ) {}

  of(tool: string, outcome: string): Attributes {
    let byOutcome = this.cache.get(tool)
    let found = byOutcome?.get(outcome)
    if (found) return found
    found = Object.freeze({ [this.names.tool]: tool, [this.names.outcome]: outcome })
    // Tool names are bounded by the registry, but a flood of dynamic tools must not grow this forever.
    if (this.size >= this.limit) return found
    if (!byOutcome) this.cache.set(tool, (byOutcome = new Map()))
    byOutcome.set(outcome, found)
    this.size++
    return found
  }
}

const noop = createNoopMeter()
/** Instruments that record nothing, until a meter provider is registered. */
export const NOOP_INSTRUMENTS: Instruments = {
  tokenUsage: noop.createHistogram('noop'),
  operationDuration: noop.createHistogram('noop'),
  toolCalls: noop.createCounter('noop'),
  toolDuration: noop.createHistogram('noop'),
}
