import type { CompletionRequest, ModelEvent, ModelService } from '@cordage/services'
import { createTestContext, type TestContext } from '@cordage/testing'
import { OpenAIModel } from '../src/index.js'

/** Reads a stream to its end. */
export async function collect(stream: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const events: ModelEvent[] = []
  for await (const event of stream) events.push(event)
  return events
}

/** Concatenated text deltas. */
export const textOf = (events: ModelEvent[]) => events.flatMap((event) => (event.type === 'text' ? [event.delta] : [])).join('')

/** The error a stream ends with. */
export async function failure(stream: AsyncIterable<ModelEvent>): Promise<any> {
  try {
    await collect(stream)
  } catch (error) {
    return error
  }
  throw new Error('expected the stream to fail')
}

/** A context with the registry and the provider loaded against `baseURL`, with fast retries. */
export async function loadModel(
  baseURL: string,
  config: Partial<OpenAIModel.Config> = {},
): Promise<{ ctx: TestContext; model: ModelService; dispose: () => Promise<void> }> {
  const ctx = await createTestContext({ print: false })
  const fiber = await ctx.plugin(OpenAIModel, { baseURL, apiKey: 'sk-test', model: 'fake-model', backoffMs: 1, ...config })
  return {
    ctx,
    model: ctx.get('model')!,
    dispose: async () => {
      await fiber.dispose()
    },
  }
}

export const weatherTool: CompletionRequest['tools'][number] = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  outputSchema: { type: 'object' },
}
