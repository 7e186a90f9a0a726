import type { CompletionRequest, ModelEvent, ModelService } from '@cordage/services'
import { collectEvents, createTestContext, streamFailure, type TestContext } from '@cordage/testing'
import { OpenAIModel, type Config } from '../src/index.js'

/** Reads a stream to its end (the test kit's `collectEvents`). */
export const collect = collectEvents

/** Concatenated text deltas. */
export const textOf = (events: ModelEvent[]) => events.flatMap((event) => (event.type === 'text' ? [event.delta] : [])).join('')

/** The error a stream ends with (the test kit's `streamFailure`). */
export const failure = streamFailure

/** A context with the registry and the provider loaded against `baseURL`, with fast retries. */
export async function loadModel(
  baseURL: string,
  config: Partial<Config> = {},
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
