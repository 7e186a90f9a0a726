import type { ModelService } from '@cordage/services'
import { collectEvents, createTestContext, streamFailure, type TestContext } from '@cordage/testing'
import type { ToolDefinition } from '@cordage/core'
import { AnthropicModel, type Config } from '../src/index.js'

/** Reads a stream to its end (the test kit's `collectEvents`). */
export const collect = collectEvents

/** The error a stream ends with (the test kit's `streamFailure`). */
export const failure = streamFailure

/** A context with the registry and the provider loaded against `baseURL`, without SDK retries. */
export async function loadModel(
  baseURL: string,
  config: Partial<Config> = {},
): Promise<{ ctx: TestContext; model: ModelService; dispose: () => Promise<void> }> {
  const ctx = await createTestContext({ print: false })
  const fiber = await ctx.plugin(AnthropicModel, { baseURL, apiKey: 'sk-ant-test', maxRetries: 0, ...config })
  return { ctx, model: ctx.get('model')!, dispose: async () => void (await fiber.dispose()) }
}

/** A parallel tool that reports a word's length. */
export const lengthTool: ToolDefinition<{ word: string }, { word: string; length: number }> = {
  name: 'word_length',
  description: 'Length of a word.',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'], additionalProperties: false },
  output: {
    schema: { type: 'object', properties: { word: { type: 'string' }, length: { type: 'number' } }, required: ['word', 'length'] },
    render: (_args, value) => [{ type: 'text', text: `${value.word} has ${value.length} letters` }],
  },
  execute: ({ word }) => ({ word, length: word.length }),
  concurrency: 'parallel',
}
