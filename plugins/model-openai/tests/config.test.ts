import { describe, expect, it } from 'vitest'
import { OpenAIModel, resolveOptions } from '../src/index.js'

const defaults = OpenAIModel.Config({})

describe('resolveOptions', () => {
  it.each([
    ['config key wins', { apiKey: 'sk-config' }, { OPENAI_API_KEY: 'sk-env' }, 'sk-config', 'check config.apiKey', 'gpt-4o-mini'],
    [
      'OPENAI_API_KEY for any host',
      { baseURL: 'http://localhost:8000/v1' },
      { OPENAI_API_KEY: 'sk-env', DEEPSEEK_API_KEY: 'ds' },
      'sk-env',
      'check the key in OPENAI_API_KEY',
      'gpt-4o-mini',
    ],
    [
      'DEEPSEEK_API_KEY and deepseek-flash for api.deepseek.com',
      { baseURL: 'https://api.deepseek.com/v1' },
      { OPENAI_API_KEY: 'sk-env', DEEPSEEK_API_KEY: 'ds' },
      'ds',
      'check the key in DEEPSEEK_API_KEY',
      'deepseek-flash',
    ],
    [
      'no key: none sent, the hint names the variable',
      { baseURL: 'http://localhost:11434/v1', model: 'qwen3' },
      {},
      undefined,
      'set config.apiKey or OPENAI_API_KEY',
      'qwen3',
    ],
    [
      'only DEEPSEEK_API_KEY with the OpenAI URL: not sent to OpenAI, the hint says how',
      {},
      { DEEPSEEK_API_KEY: 'ds' },
      undefined,
      'set config.apiKey or OPENAI_API_KEY (DEEPSEEK_API_KEY is set: for DeepSeek use baseURL https://api.deepseek.com/v1)',
      'gpt-4o-mini',
    ],
  ])('%s', (_title, config, env, apiKey, keyHint, model) => {
    const options = resolveOptions({ ...defaults, ...config }, env)
    expect([options.apiKey, options.keyHint, options.model]).toEqual([apiKey, keyHint, model])
  })

  it('applies the documented defaults', () => {
    expect(defaults).toMatchObject({
      baseURL: 'https://api.openai.com/v1',
      maxRetries: 2,
      timeoutMs: 120_000,
      backoffMs: 500,
      maxRetryDelayMs: 30_000,
      stream: true,
      includeUsage: true,
      images: 'omit',
    })
  })

  it('rejects an invalid field through the schema before the plugin starts', () => {
    expect(() => OpenAIModel.Config({ images: 'inline' } as any)).toThrow(/images/)
    expect(() => OpenAIModel.Config({ temperature: 5 })).toThrow(/temperature/)
  })
})
