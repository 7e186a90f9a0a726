import { resolve } from 'node:path'
import type { ModelService } from '@cordage/agent'
import { cassettePlugin, RecordingModel } from './cassette.js'
import type { ModelSettings } from './config.js'
import { CliConfigError, CliError, errorMessage } from './errors.js'
import { configIssues, importPlugin } from './plugins.js'
import type { Runtime } from './runtime.js'

/** Model choices from the command line; they win over cordage.yml. */
export interface ModelFlags {
  model?: string
  baseURL?: string
  cassette?: string
  record?: string
}

/** What `startModel` decided. */
export type ModelChoice = { kind: 'cassette'; file: string } | { kind: 'provider'; config: Record<string, unknown> }

const DEEPSEEK_URL = 'https://api.deepseek.com/v1'
const LOCAL = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?(\/|$)/

/**
 * Picks the model: a cassette (flag, then cordage.yml), else the OpenAI-compatible provider configured by
 * flags, cordage.yml and the environment (OPENAI_API_KEY, or DEEPSEEK_API_KEY for DeepSeek's endpoint).
 */
export function chooseModel(settings: ModelSettings, flags: ModelFlags, cwd: string, baseDir: string, env: NodeJS.ProcessEnv = process.env): ModelChoice {
  if (flags.cassette && !flags.record) return { kind: 'cassette', file: resolve(cwd, flags.cassette) }
  const live = flags.model ?? flags.baseURL ?? flags.record
  if (settings.cassette && !live) return { kind: 'cassette', file: resolve(baseDir, settings.cassette) }
  const { cassette: _cassette, ...rest } = settings
  // With only a DeepSeek key, DeepSeek's endpoint is the provider; the plugin reads the key from the environment.
  const deepseek = !env.OPENAI_API_KEY && !!env.DEEPSEEK_API_KEY
  const baseURL = flags.baseURL ?? settings.baseURL ?? env.OPENAI_BASE_URL ?? (deepseek ? DEEPSEEK_URL : undefined)
  const model = flags.model ?? settings.model ?? env.CORDAGE_MODEL
  const hasKey = !!(settings.apiKey ?? env.OPENAI_API_KEY ?? env.DEEPSEEK_API_KEY)
  if (!hasKey && !(baseURL && LOCAL.test(baseURL))) {
    throw new CliError(
      'no model configured: set OPENAI_API_KEY or DEEPSEEK_API_KEY, pass --base-url for a local server (Ollama, vLLM, llama.cpp), or replay a recording with --cassette <file>',
    )
  }
  return { kind: 'provider', config: { ...rest, ...(model && { model }), ...(baseURL && { baseURL }) } }
}

/** Loads the chosen model into the runtime; with `record`, the provider is wrapped in a recorder. */
export async function startModel(runtime: Runtime, choice: ModelChoice, record?: string): Promise<{ model: ModelService; recorder?: RecordingModel }> {
  if (choice.kind === 'cassette') {
    await runtime.load(cassettePlugin, { file: choice.file })
    return { model: runtime.ctx.get('model') as ModelService }
  }
  const provider = await importPlugin('@cordage/plugin-model-openai', runtime.config.baseDir, 'model')
  if (!provider) throw new CliError('model: @cordage/plugin-model-openai exports no plugin yet; use --cassette <file>')
  if (!record) {
    await loadProvider(runtime, provider, choice.config, runtime.ctx)
    return { model: runtime.ctx.get('model') as ModelService }
  }
  // The real provider lives in an isolated `model` slot; the recorder is the `model` everyone else sees.
  const isolated = runtime.ctx.isolate('model')
  await loadProvider(runtime, provider, choice.config, isolated)
  const recorder = new RecordingModel(isolated.get('model') as ModelService, resolve(record))
  await runtime.load({ name: 'cassette-recorder', apply: (ctx: any) => ctx.provide('model', recorder) })
  return { model: recorder, recorder }
}

async function loadProvider(runtime: Runtime, provider: any, config: Record<string, unknown>, ctx: Runtime['ctx']): Promise<void> {
  const issues = configIssues(provider, config)
  if (issues.length) throw new CliConfigError(issues.map((issue) => `model: @cordage/plugin-model-openai: ${issue}`).join('\n'))
  try {
    runtime.track(await ctx.plugin(provider, config))
  } catch (error) {
    throw new CliError(`model: @cordage/plugin-model-openai: failed to start: ${errorMessage(error)}`)
  }
  if (!ctx.get('model')) throw new CliError('model: @cordage/plugin-model-openai loaded but provides no `model` service')
}
