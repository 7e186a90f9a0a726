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
  provider?: string
  noKey?: boolean
  cassette?: string
  record?: string
}

/** The model providers the CLI can load, by the name `--provider` and `model: { provider }` take. */
export const PROVIDERS = { openai: '@cordage/plugin-model-openai', anthropic: '@cordage/plugin-model-anthropic' } as const
export type ProviderName = keyof typeof PROVIDERS

/** What `startModel` decided. */
export type ModelChoice = { kind: 'cassette'; file: string } | { kind: 'provider'; provider: ProviderName; config: Record<string, unknown> }

const DEEPSEEK_URL = 'https://api.deepseek.com/v1'
const LOCAL = /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?(\/|$)/

function providerName(value: unknown, where: string): ProviderName | undefined {
  if (value === undefined || value === '') return undefined
  if (value === 'openai' || value === 'anthropic') return value
  throw new CliError(`${where}: unknown provider ${JSON.stringify(value)}; use openai (OpenAI-compatible: OpenAI, DeepSeek, Ollama, vLLM) or anthropic`)
}

/**
 * Picks the model: a cassette (flag, then cordage.yml), else a provider chosen by `--provider`,
 * `model: { provider }`, `CORDAGE_PROVIDER`, a `claude-*` model name, or the keys present (only
 * ANTHROPIC_API_KEY → anthropic; otherwise the OpenAI-compatible provider, DeepSeek's endpoint when
 * DEEPSEEK_API_KEY is the only key), configured by flags, cordage.yml and the environment.
 */
export function chooseModel(settings: ModelSettings, flags: ModelFlags, cwd: string, baseDir: string, env: NodeJS.ProcessEnv = process.env): ModelChoice {
  if (flags.cassette && !flags.record) return { kind: 'cassette', file: resolve(cwd, flags.cassette) }
  const live = flags.model ?? flags.baseURL ?? flags.record ?? flags.provider
  if (settings.cassette && !live) return { kind: 'cassette', file: resolve(baseDir, settings.cassette) }
  const { cassette: _cassette, provider: configured, noKey: configuredNoKey, ...rest } = settings
  const model = flags.model ?? settings.model ?? env.CORDAGE_MODEL
  const anthropicKey = !!(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN)
  const openaiKey = !!(settings.apiKey ?? env.OPENAI_API_KEY ?? env.DEEPSEEK_API_KEY)
  const provider =
    providerName(flags.provider, '--provider') ??
    providerName(configured, 'cordage.yml: model: provider') ??
    providerName(env.CORDAGE_PROVIDER, 'CORDAGE_PROVIDER') ??
    (model?.startsWith('claude') || (anthropicKey && !openaiKey && !flags.baseURL && !settings.baseURL) ? 'anthropic' : 'openai')
  const noKey = flags.noKey ?? configuredNoKey === true
  if (provider === 'anthropic') {
    if (!anthropicKey && !settings.apiKey) throw new CliError('the anthropic provider needs a key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)')
    const baseURL = flags.baseURL ?? settings.baseURL
    return { kind: 'provider', provider, config: { ...rest, ...(model && { model }), ...(baseURL && { baseURL }) } }
  }
  // With only a DeepSeek key, DeepSeek's endpoint is the provider; the plugin reads the key from the environment.
  const deepseek = !env.OPENAI_API_KEY && !!env.DEEPSEEK_API_KEY
  const baseURL = flags.baseURL ?? settings.baseURL ?? env.OPENAI_BASE_URL ?? (deepseek ? DEEPSEEK_URL : undefined)
  if (!openaiKey && !noKey && !(baseURL && LOCAL.test(baseURL))) {
    throw new CliError(
      baseURL
        ? `no key for ${baseURL}: set OPENAI_API_KEY, or pass --no-key (model: { noKey: true } in cordage.yml) for a server that needs none (vLLM, Ollama on another host)`
        : 'no model configured: set OPENAI_API_KEY, DEEPSEEK_API_KEY or ANTHROPIC_API_KEY, pass --base-url for a local server (Ollama, vLLM, llama.cpp; add --no-key for one on another host), or replay a recording with --cassette <file>',
    )
  }
  return { kind: 'provider', provider, config: { ...rest, ...(model && { model }), ...(baseURL && { baseURL }), ...(noKey && { noKey: true }) } }
}

/** Loads the chosen model into the runtime; with `record`, the provider is wrapped in a recorder. */
export async function startModel(runtime: Runtime, choice: ModelChoice, record?: string): Promise<{ model: ModelService; recorder?: RecordingModel }> {
  if (choice.kind === 'cassette') {
    await runtime.load(cassettePlugin, { file: choice.file })
    return { model: runtime.ctx.get('model') as ModelService }
  }
  const spec = PROVIDERS[choice.provider]
  const provider = await importPlugin(spec, runtime.config.baseDir, 'model')
  if (!provider) throw new CliError(`model: ${spec} exports no plugin; use --cassette <file>`)
  if (!record) {
    await loadProvider(runtime, spec, provider, choice.config, runtime.ctx)
    return { model: runtime.ctx.get('model') as ModelService }
  }
  // The real provider lives in an isolated `model` slot; the recorder is the `model` everyone else sees.
  const isolated = runtime.ctx.isolate('model')
  await loadProvider(runtime, spec, provider, choice.config, isolated)
  const recorder = new RecordingModel(isolated.get('model') as ModelService, resolve(record))
  await runtime.load({ name: 'cassette-recorder', apply: (ctx: any) => ctx.provide('model', recorder) })
  return { model: recorder, recorder }
}

async function loadProvider(runtime: Runtime, spec: string, provider: any, config: Record<string, unknown>, ctx: Runtime['ctx']): Promise<void> {
  const issues = configIssues(provider, config)
  if (issues.length) throw new CliConfigError(issues.map((issue) => `model: ${spec}: ${issue}`).join('\n'))
  try {
    runtime.track(await ctx.plugin(provider, config))
  } catch (error) {
    throw new CliError(`model: ${spec}: failed to start: ${errorMessage(error)}`)
  }
  if (!ctx.get('model')) throw new CliError(`model: ${spec} loaded but provides no \`model\` service`)
}
