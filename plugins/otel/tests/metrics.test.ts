import { describe, expect, it } from 'vitest'
import { runScenario } from './scenario.js'
import type { Encoding } from './sdk.js'

const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

describe.each<Encoding>(['protobuf', 'json'])('metrics of a scripted run exported over OTLP/HTTP (%s)', (encoding) => {
  it('token usage and request duration per model request, tool call counts and durations by tool and outcome', async () => {
    const { receiver } = await runScenario(encoding, { redact: true })
    const points = receiver.points
    const model = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'scripted', 'gen_ai.request.model': 'test-model' }
    // Five requests: three of the parent, two of the child, each 1200 in and 30 out.
    const input = points.find((point) => point.metric === 'gen_ai.client.token.usage' && point.attributes['gen_ai.token.type'] === 'input')
    const output = points.find((point) => point.metric === 'gen_ai.client.token.usage' && point.attributes['gen_ai.token.type'] === 'output')
    expect(input).toMatchObject({ unit: '{token}', attributes: model, count: 5, sum: 6000, explicitBounds: TOKEN_BUCKETS })
    expect(output).toMatchObject({ count: 5, sum: 150 })
    const duration = points.find((point) => point.metric === 'gen_ai.client.operation.duration')
    expect(duration).toMatchObject({ unit: 's', attributes: model, count: 5, explicitBounds: DURATION_BUCKETS })

    const calls = Object.fromEntries(
      points
        .filter((point) => point.metric === 'cordage.tool.calls')
        .map((point) => [`${point.attributes['gen_ai.tool.name']} ${point.attributes['cordage.tool.outcome']}`, point.value]),
    )
    expect(calls).toEqual({ 'run_code success': 1, 'lookup success': 2, 'echo success': 1, 'forbidden denied': 1, 'subagent success': 1 })
    const durations = Object.fromEntries(
      points
        .filter((point) => point.metric === 'cordage.tool.duration')
        .map((point) => [`${point.attributes['gen_ai.tool.name']} ${point.attributes['cordage.tool.outcome']}`, point.count]),
    )
    expect(durations).toEqual(calls)
    expect(points.find((point) => point.metric === 'cordage.tool.duration')?.unit).toBe('s')
  })
})
