import { afterEach, expect, it } from 'vitest'
import { Agent, type AgentEvent } from '@cordage/agent'
import type { ToolDefinition } from '@cordage/core'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { loadModel } from './helpers.js'

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const forecast: ToolDefinition<{ city: string }, { city: string; celsius: number }> = {
  name: 'forecast',
  description: 'Forecast for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  output: {
    schema: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } }, required: ['city', 'celsius'] },
    render: (_args, value) => [{ type: 'text', text: `${value.city}: ${value.celsius} °C` }],
  },
  execute: ({ city }) => ({ city, celsius: city.length * 3 }),
  concurrency: 'parallel',
}

it('drives a real agent turn end to end: the agent loop, the registry and the provider over loopback HTTP', async () => {
  server = await startFakeOpenAI([
    {
      text: 'Let me look.',
      toolCalls: [
        { id: 'call_1', name: 'forecast', arguments: { city: 'Oslo' } },
        { id: 'call_2', name: 'forecast', arguments: { town: 'Lima' } },
      ],
    },
    { text: 'Oslo is 12 °C.', usage: { prompt_tokens: 50, completion_tokens: 6 } },
  ])
  const { ctx, dispose } = await loadModel(server.baseURL)
  ctx.tools.register(forecast)
  const events: AgentEvent[] = []
  const agent = new Agent(ctx, { system: 'You forecast.', onEvent: (event) => events.push(event) })

  const result = await agent.run('Weather in Oslo and Lima?')

  expect(result.text).toBe('Oslo is 12 °C.')
  expect(result.stopReason).toBe('completed')
  expect(result.turns).toBe(2)
  const first = server.requests[0]!.body
  expect(first.tools.map((tool: any) => tool.function.name)).toEqual(['forecast'])
  expect(first.tools[0].function.parameters).toEqual(forecast.parameters)
  // Parallel calls finish in any order; results are committed in model order.
  const ends = events.filter((event) => event.type === 'tool/end').sort((a, b) => (a.callId < b.callId ? -1 : 1))
  expect(ends.map((event) => [event.callId, event.isError])).toEqual([
    ['call_1', false],
    ['call_2', true],
  ])
  // What the second request carries is exactly what the registry rendered, success and failure alike.
  const toolMessages = server.requests[1]!.body.messages.filter((message: any) => message.role === 'tool')
  expect(toolMessages).toEqual(
    ends.map((event) => ({ role: 'tool', tool_call_id: event.callId, content: (event.content as any[]).map((block) => block.text).join('\n') })),
  )
  expect(toolMessages[0].content).toBe('Oslo: 12 °C')
  await dispose()
})
