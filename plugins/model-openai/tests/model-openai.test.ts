import { afterEach, describe, expect, it } from 'vitest'
import type { Message } from '@cordage/services'
import { startFakeOpenAI, type FakeOpenAIServer } from '@cordage/testing'
import { collect, loadModel, textOf, weatherTool } from './helpers.js'

let server: FakeOpenAIServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('model-openai over real loopback HTTP', () => {
  it('streams a full turn: tool schemas sent, tool-call deltas assembled, the tool result sent back verbatim, final text returned', async () => {
    server = await startFakeOpenAI(
      [
        {
          text: 'Checking both cities.',
          toolCalls: [
            { id: 'call_a', name: 'get_weather', arguments: { city: 'Paris' } },
            { id: 'call_b', name: 'get_weather', arguments: '{"city": "Zürich 🌧"}' },
          ],
          usage: { prompt_tokens: 42, completion_tokens: 17 },
          chunkSize: 3,
          delayMs: 1,
        },
        { text: 'Paris is sunny; Zürich is wet. 🌦', usage: { prompt_tokens: 80, completion_tokens: 9 } },
      ],
      { apiKey: 'sk-test' },
    )
    const { model, dispose } = await loadModel(server.baseURL)
    expect(model.id).toBe('openai:fake-model')

    const messages: Message[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Zürich?' },
    ]
    const first = await collect(model.stream({ messages, tools: [weatherTool] }))
    expect(textOf(first)).toBe('Checking both cities.')
    // Paced chunks arrive in separate reads, so the text streams in several deltas.
    expect(first.filter((event) => event.type === 'text').length).toBeGreaterThan(1)
    expect(first.slice(-3)).toEqual([
      { type: 'tool-call', call: { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'get_weather', arguments: '{"city": "Zürich 🌧"}' } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 42, outputTokens: 17, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ])

    const request = server.requests[0]!
    expect(request.headers.authorization).toBe('Bearer sk-test')
    expect(request.body).toEqual({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris and Zürich?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Current weather for a city.', parameters: weatherTool.parameters } }],
      stream: true,
      stream_options: { include_usage: true },
    })

    const calls = first.flatMap((event) => (event.type === 'tool-call' ? [event.call] : []))
    const rendered = 'Paris: 24 °C, sunny\n  (line two keeps its indentation)'
    messages.push(
      { role: 'assistant', content: 'Checking both cities.', toolCalls: calls },
      { role: 'tool', callId: 'call_a', name: 'get_weather', content: [{ type: 'text', text: rendered }], isError: false },
      { role: 'tool', callId: 'call_b', name: 'get_weather', content: [{ type: 'text', text: 'error: station offline' }], isError: true },
    )
    const second = await collect(model.stream({ messages, tools: [weatherTool] }))
    expect(textOf(second)).toBe('Paris is sunny; Zürich is wet. 🌦')
    expect(second.at(-1)).toEqual({
      type: 'done',
      finishReason: 'stop',
      usage: { inputTokens: 80, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
    })
    expect(server.requests[1]!.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Checking both cities.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Zürich 🌧"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: rendered },
      { role: 'tool', tool_call_id: 'call_b', content: 'error: station offline' },
    ])
    await dispose()
  })

  it('parses a stream whose bytes arrive in 5-byte pieces, splitting lines and UTF-8 sequences', async () => {
    server = await startFakeOpenAI([
      { text: 'naïve café — 日本語 🎉 done', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: '東京' } }], bytesPerWrite: 5 },
    ])
    const { model, dispose } = await loadModel(server.baseURL)
    const events = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool] }))
    expect(textOf(events)).toBe('naïve café — 日本語 🎉 done')
    expect(events.at(-2)).toEqual({ type: 'tool-call', call: { id: 'c1', name: 'get_weather', arguments: '{"city":"東京"}' } })
    await dispose()
  })

  it('speaks the non-streaming form when stream is false, giving the same events', async () => {
    server = await startFakeOpenAI([
      { text: 'plain', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: { city: 'Oslo' } }], usage: { prompt_tokens: 3, completion_tokens: 4 } },
    ])
    const { model, dispose } = await loadModel(server.baseURL, { stream: false })
    const events = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool] }))
    expect(events).toEqual([
      { type: 'text', delta: 'plain' },
      { type: 'tool-call', call: { id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { type: 'done', finishReason: 'tool_calls', usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 } },
    ])
    expect(server.requests[0]!.body.stream).toBeUndefined()
    await dispose()
  })

  it('omits tools when none are offered, omits stream_options when includeUsage is off, and sends sampling options', async () => {
    server = await startFakeOpenAI([{ text: 'ok' }])
    const { model, dispose } = await loadModel(server.baseURL, {
      includeUsage: false,
      temperature: 0.2,
      maxTokens: 64,
      seed: 7,
      headers: { 'x-title': 'cordage' },
      extraBody: { top_k: 20 },
    })
    const events = await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [] }))
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' })
    const request = server.requests[0]!
    expect(request.headers['x-title']).toBe('cordage')
    expect(request.body).toEqual({
      top_k: 20,
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      temperature: 0.2,
      max_tokens: 64,
      seed: 7,
    })
    await dispose()
  })

  it('reads each response to its end so consecutive turns reuse keep-alive connections', async () => {
    const turns = ['one', 'two', 'three', 'four', 'five', 'six']
    server = await startFakeOpenAI(turns.map((text) => ({ text, toolCalls: [{ name: 'get_weather', arguments: { city: text } }], delayMs: 2 })))
    const { model, dispose } = await loadModel(server.baseURL)
    for (const expected of turns)
      expect(textOf(await collect(model.stream({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool] })))).toBe(expected)
    // The response ends 2 ms after [DONE]: cancelling there would cost a socket per turn. fetch may open a
    // second socket while the first is still being released.
    expect(server.connections()).toBeLessThanOrEqual(2)
    await dispose()
  })

  it('provides ctx.model while loaded and removes it on dispose', async () => {
    server = await startFakeOpenAI([])
    const { ctx, dispose } = await loadModel(server.baseURL)
    expect(ctx.get('model')?.id).toBe('openai:fake-model')
    await dispose()
    expect(ctx.get('model')).toBeUndefined()
  })

  it('rejects a base URL without a scheme at load, naming the field', async () => {
    await expect(loadModel('localhost:11434/v1')).rejects.toThrow('model-openai: config.baseURL "localhost:11434/v1" must start with http:// or https://')
  })
})
