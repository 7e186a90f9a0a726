import { existsSync, readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { unknownConfigKeys, type JsonSchemaNode } from '@cordage/core'
// The settings alone (no BullMQ or Redis client): every command reads cordage.yml, few use the queue.
import { resolveQueueSettings, type QueueSettings } from '@cordage/queue/settings'
import { CliConfigError, errorMessage } from './errors.js'

/** One `plugins:` entry: a package name or a relative path, and the config it is given. */
export interface PluginEntry {
  spec: string
  config: unknown
}

/** The `model:` section of cordage.yml. */
export interface ModelSettings {
  /** Model name, e.g. `gpt-4o-mini`. */
  model?: string
  /** OpenAI-compatible endpoint. */
  baseURL?: string
  /** An API key; prefer the environment (OPENAI_API_KEY, DEEPSEEK_API_KEY, ANTHROPIC_API_KEY). */
  apiKey?: string
  /** `openai` (OpenAI-compatible) or `anthropic`. */
  provider?: string
  /** Send no key to `baseURL` (a keyless server on another host). */
  noKey?: boolean
  /** Replay this cassette file (relative to cordage.yml) instead of calling a provider. */
  cassette?: string
  /** Any further provider options, passed to the model plugin as they are. */
  [key: string]: unknown
}

/** The `agent:` section of cordage.yml. */
export interface AgentSettings {
  maxTurns?: number
  system?: string
  /** When the conversation is compacted (`CompactionOptions` of `@cordage/agent`). */
  compaction?: { auto?: boolean; threshold?: number; contextWindow?: number; keepTokens?: number; clearAbove?: number }
  /** What a run waits for before it returns (`SessionLog.durability`): `process` (default) or `machine` (its fsync too). */
  durability?: 'process' | 'machine'
}

/** A parsed cordage.yml (or the default preset when `file` is undefined). */
export interface CordageConfig {
  file?: string
  /** Directory that relative paths in the file are resolved against. */
  baseDir: string
  /** `undefined` when the file has no `plugins:` key: the default preset loads. */
  plugins: PluginEntry[] | undefined
  model: ModelSettings
  agent: AgentSettings
  /** Where sessions are kept: `{ postgres: <url> }`, else the JSONL files. */
  store?: { postgres?: string }
  /** `cordage serve` settings: the bearer token (`CORDAGE_SERVE_TOKEN` wins), the largest request body. */
  serve?: { token?: string; bodyLimit?: number }
  /** The run queue (`cordage worker`, `cordage run --queue`): `{ redis: <url> }` and its tuning. */
  queue?: QueueSettings
  /** OpenTelemetry (`@cordage/plugin-otel`'s config): the SDK is set up and the plugin loaded when present. */
  otel?: Record<string, unknown>
}

const TOP_LEVEL = ['plugins', 'model', 'agent', 'store', 'serve', 'queue', 'otel']

// The key shape of cordage.yml for the shared unknown-key check; `model:` passes further keys to the provider
// (whose own Config checks them) and each plugin's config is checked against that plugin's Config.
const Document: JsonSchemaNode = {
  type: 'object',
  properties: {
    plugins: {},
    model: { type: 'object', additionalProperties: true },
    store: { type: 'object', properties: { postgres: { type: 'string' } } },
    serve: { type: 'object', properties: { token: { type: 'string' }, bodyLimit: { type: 'integer' } } },
    // Checked key by key by the plugin's own Config when it loads.
    otel: { type: 'object', additionalProperties: true },
    agent: {
      type: 'object',
      properties: {
        maxTurns: { type: 'integer' },
        system: { type: 'string' },
        durability: { enum: ['process', 'machine'] },
        compaction: {
          type: 'object',
          properties: {
            auto: { type: 'boolean' },
            threshold: { type: 'number' },
            contextWindow: { type: 'integer' },
            keepTokens: { type: 'integer' },
            clearAbove: { type: 'integer' },
          },
        },
      },
    },
    queue: { type: 'object', properties: { redis: {}, name: {}, attempts: {}, lockDuration: {}, stalledInterval: {} } },
  },
}

/** Reads `file` (default `<cwd>/cordage.yml`); returns undefined when the default file does not exist. */
export function readConfig(cwd: string, file?: string): CordageConfig | undefined {
  const path = resolve(cwd, file ?? 'cordage.yml')
  if (!existsSync(path)) {
    if (file) throw new CliConfigError(`config file not found: ${path}`)
    return undefined
  }
  let document: unknown
  try {
    document = parseYaml(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new CliConfigError(`${label(path)}: not valid YAML: ${errorMessage(error)}`)
  }
  return parseConfig(document ?? {}, path)
}

/** Validates the shape of a parsed cordage.yml document. */
export function parseConfig(document: unknown, path: string): CordageConfig {
  const where = label(path)
  if (!isRecord(document)) throw new CliConfigError(`${where}: expected a mapping with ${TOP_LEVEL.join(', ')}`)
  const unknown = unknownConfigKeys(Document, document)
  if (unknown.length) throw new CliConfigError(unknown.map((issue) => `${where}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`).join('\n'))
  const model = document.model ?? {}
  if (!isRecord(model)) throw new CliConfigError(`${where}: model: expected a mapping (model, baseURL, cassette, …)`)
  if (model.noKey !== undefined && typeof model.noKey !== 'boolean') throw new CliConfigError(`${where}: model: noKey: expected true or false`)
  for (const key of ['model', 'baseURL', 'apiKey', 'cassette', 'provider']) {
    if (model[key] !== undefined && typeof model[key] !== 'string')
      throw new CliConfigError(`${where}: model: ${key}: expected string but got ${JSON.stringify(model[key])}`)
  }
  const agent = document.agent ?? {}
  if (!isRecord(agent)) throw new CliConfigError(`${where}: agent: expected a mapping (maxTurns, system)`)
  if (agent.maxTurns !== undefined && !(Number.isInteger(agent.maxTurns) && (agent.maxTurns as number) > 0)) {
    throw new CliConfigError(`${where}: agent: maxTurns: expected a positive integer but got ${JSON.stringify(agent.maxTurns)}`)
  }
  const compaction = agent.compaction as Record<string, unknown> | undefined
  if (
    compaction !== undefined &&
    (!isRecord(compaction) || (compaction.threshold !== undefined && !(Number(compaction.threshold) > 0 && Number(compaction.threshold) < 1)))
  ) {
    throw new CliConfigError(`${where}: agent: compaction: threshold: expected a share of the window between 0 and 1, e.g. 0.8`)
  }
  if (agent.system !== undefined && typeof agent.system !== 'string')
    throw new CliConfigError(`${where}: agent: system: expected string but got ${JSON.stringify(agent.system)}`)
  if (agent.durability !== undefined && agent.durability !== 'process' && agent.durability !== 'machine')
    throw new CliConfigError(
      `${where}: agent: durability: expected process (a run returns once its events are written) or machine (once they are fsynced) but got ${JSON.stringify(agent.durability)}`,
    )
  const store = document.store
  if (store !== undefined && (!isRecord(store) || typeof store.postgres !== 'string'))
    throw new CliConfigError(`${where}: store: expected { postgres: <postgres:// url> } (omit it for the JSONL session files)`)
  const serve = document.serve
  if (serve !== undefined) {
    if (!isRecord(serve)) throw new CliConfigError(`${where}: serve: expected a mapping (token, bodyLimit)`)
    if (serve.token !== undefined && typeof serve.token !== 'string') throw new CliConfigError(`${where}: serve: token: expected a string`)
    if (serve.bodyLimit !== undefined && !(Number.isInteger(serve.bodyLimit) && (serve.bodyLimit as number) > 0))
      throw new CliConfigError(`${where}: serve: bodyLimit: expected a positive number of bytes`)
  }
  const queue = document.queue
  if (queue !== undefined) {
    if (!isRecord(queue)) throw new CliConfigError(`${where}: queue: expected { redis: <redis:// url> }`)
    try {
      resolveQueueSettings(queue as unknown as QueueSettings)
    } catch (error) {
      throw new CliConfigError(`${where}: ${errorMessage(error)}`)
    }
  }
  const otel = document.otel === null ? {} : document.otel
  if (otel !== undefined && !isRecord(otel))
    throw new CliConfigError(`${where}: otel: expected a mapping (serviceName, endpoint, protocol, captureContent, …) or {}`)
  return {
    file: path,
    baseDir: dirname(path),
    plugins: parsePlugins(document.plugins, where),
    model: model as ModelSettings,
    agent: agent as AgentSettings,
    ...(store && { store: store as { postgres: string } }),
    ...(serve !== undefined && { serve: serve as { token?: string; bodyLimit?: number } }),
    ...(queue && { queue: queue as unknown as QueueSettings }),
    ...(otel && { otel }),
  }
}

/** `plugins:` is a map (name → config) or a list of names, one-key maps, or `{ name, config }`. */
function parsePlugins(value: unknown, where: string): PluginEntry[] | undefined {
  if (value === undefined) return undefined
  if (value === null) return []
  if (isRecord(value)) return Object.entries(value).map(([spec, config]) => ({ spec, config: config ?? undefined }))
  if (!Array.isArray(value)) throw new CliConfigError(`${where}: plugins: expected a map or a list of plugin names`)
  return value.map((item, index) => {
    if (typeof item === 'string') return { spec: item, config: undefined }
    if (isRecord(item) && typeof item.name === 'string' && Object.keys(item).every((key) => key === 'name' || key === 'config')) {
      return { spec: item.name, config: item.config ?? undefined }
    }
    if (isRecord(item) && Object.keys(item).length === 1) {
      const [spec, config] = Object.entries(item)[0]
      return { spec, config: config ?? undefined }
    }
    throw new CliConfigError(`${where}: plugins[${index}]: expected a plugin name, { <name>: <config> } or { name, config }`)
  })
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function label(path: string): string {
  return path.endsWith('/cordage.yml') || path === 'cordage.yml' ? 'cordage.yml' : path
}
