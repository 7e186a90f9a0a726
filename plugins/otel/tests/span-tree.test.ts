import { describe, expect, it } from 'vitest'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import type { ReceivedSpan } from './receiver.js'
import { REMOTE_SPAN, REMOTE_TRACE, runScenario, SECRET } from './scenario.js'
import type { Encoding } from './sdk.js'

function only(spans: ReceivedSpan[], name: string, where: (span: ReceivedSpan) => boolean = () => true): ReceivedSpan {
  const found = spans.filter((span) => span.name === name && where(span))
  expect(found, `exactly one span "${name}"`).toHaveLength(1)
  return found[0]!
}

/** The tree as names, children in start order is not guaranteed: sorted by name per level. */
function tree(spans: ReceivedSpan[], parent: string): unknown[] {
  return spans
    .filter((span) => span.parentSpanId === parent)
    .map((span) => {
      const children = tree(spans, span.spanId)
      return children.length ? { [span.name]: children } : span.name
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
}

describe.each<Encoding>(['protobuf', 'json'])('a scripted run exported over OTLP/HTTP (%s)', (encoding) => {
  it('forms one trace: the run, its model requests, its tool calls, nested program calls and the subagent run under the calls that made them', async () => {
    const { spans } = await runScenario(encoding, { redact: true })
    // Every span continues the trace of the carrier the run started under.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([REMOTE_TRACE]))
    expect(tree(spans, REMOTE_SPAN)).toEqual([
      {
        'invoke_agent cordage': [
          'chat test-model',
          'chat test-model',
          'chat test-model',
          { 'execute_tool run_code': ['execute_tool echo', 'execute_tool forbidden', 'execute_tool lookup'] },
          { 'execute_tool subagent': [{ 'invoke_agent subagent': ['chat test-model', 'chat test-model', 'execute_tool lookup'] }] },
        ],
      },
    ])
    expect(spans.every((span) => span.scope === '@cordage/plugin-otel' && span.resource['service.name'] === 'otel-test')).toBe(true)
  })

  it('carries the GenAI attributes: agent, model request (provider, model, finish reason, tokens) and tool call (id, outcome, error code, policy decision)', async () => {
    const { spans } = await runScenario(encoding, { redact: true })
    const run = only(spans, 'invoke_agent cordage')
    expect(run.kind).toBe(SpanKind.INTERNAL + 1)
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'cordage',
      'gen_ai.agent.id': 'parent-session',
      'gen_ai.conversation.id': 'parent-session',
      'cordage.run.stop_reason': 'completed',
    })
    const child = only(spans, 'invoke_agent subagent')
    expect(child.attributes).toMatchObject({ 'gen_ai.agent.name': 'subagent', 'cordage.run.stop_reason': 'completed' })

    const chat = spans.filter((span) => span.name === 'chat test-model' && span.parentSpanId === run.spanId)
    expect(chat).toHaveLength(3)
    for (const request of chat) {
      expect(request.kind).toBe(SpanKind.CLIENT + 1)
      expect(request.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'test-model',
        'gen_ai.conversation.id': 'parent-session',
        'gen_ai.usage.input_tokens': 1200,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.usage.cache_read.input_tokens': 1000,
        'gen_ai.usage.cache_creation.input_tokens': 0,
      })
    }
    expect(chat.map((request) => request.attributes['gen_ai.response.finish_reasons']).sort()).toEqual([['stop'], ['tool_calls'], ['tool_calls']])

    const code = only(spans, 'execute_tool run_code')
    expect(code.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'run_code',
      'gen_ai.tool.call.id': 'call_code',
      'gen_ai.tool.type': 'function',
      'cordage.tool.outcome': 'success',
      'cordage.policy.decision': 'allow',
    })
    const denied = only(spans, 'execute_tool forbidden')
    expect(denied.attributes).toMatchObject({
      'cordage.tool.outcome': 'denied',
      'error.type': 'DENIED',
      'cordage.policy.decision': 'deny',
      'cordage.tool.nested': true,
    })
    expect(denied.status).toEqual({ code: SpanStatusCode.ERROR, message: 'DENIED' })
    const childLookup = only(spans, 'execute_tool lookup', (span) => span.parentSpanId === child.spanId)
    expect(childLookup.attributes).toMatchObject({ 'gen_ai.tool.call.id': 'call_child', 'cordage.tool.outcome': 'success' })
  })

  it('records content only as the model saw it: a value the policy redacted appears nowhere in the exported data', async () => {
    const { produced, receiver, spans } = await runScenario(encoding, { redact: true })
    // The tool did return the secret (twice: in the program and in the child run)…
    expect(produced).toEqual([SECRET, SECRET])
    // …and content was recorded, post-policy…
    const childLookup = only(spans, 'execute_tool lookup', (span) => span.attributes['cordage.tool.nested'] !== true)
    expect(childLookup.attributes['gen_ai.tool.call.result']).toBe('user ada, token [REDACTED]')
    expect(String(only(spans, 'execute_tool run_code').attributes['gen_ai.tool.call.result'])).toContain('[REDACTED]')
    expect(spans.some((span) => String(span.attributes['gen_ai.input.messages'] ?? '').includes('[REDACTED]'))).toBe(true)
    // …while the secret itself is in no byte of any export request.
    expect(receiver.requests.length).toBeGreaterThan(0)
    for (const request of receiver.requests) expect(request.raw.includes(SECRET)).toBe(false)
  })

  it('without the redacting rule the same secret does reach the exported content (the check above can see it)', async () => {
    const { receiver } = await runScenario(encoding, { redact: false })
    expect(receiver.requests.some((request) => request.raw.includes(SECRET))).toBe(true)
  })
})
