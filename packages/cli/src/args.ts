import { parseArgs } from 'node:util'
import { CliError } from './errors.js'

/** One option: `node:util` parseArgs form plus a description for help. */
export interface Option {
  type: 'string' | 'boolean'
  short?: string
  multiple?: boolean
  description?: string
}

/** Option declarations, keyed by long name. */
export type Options = Record<string, Option>

/** Parsed option values: strings, booleans, or lists of them for `multiple` options. */
export type Values = Record<string, string | boolean | Array<string | boolean> | undefined>

/** Options every command accepts. */
export const commonOptions = {
  cwd: { type: 'string', description: 'work in this directory (cordage.yml and .cordage/ are looked up here)' },
  config: { type: 'string', short: 'c', description: 'use this config file instead of ./cordage.yml' },
  verbose: { type: 'boolean', short: 'v', description: 'print plugin logs at info level' },
  help: { type: 'boolean', short: 'h', description: 'show help for this command' },
} satisfies Options

/** Options of commands that talk to a model. */
export const modelOptions = {
  model: { type: 'string', short: 'm', description: 'model name (e.g. gpt-4o-mini, deepseek-v4-pro, claude-sonnet-4-6)' },
  provider: { type: 'string', description: 'openai (OpenAI-compatible: OpenAI, DeepSeek, Ollama, vLLM) or anthropic (default: from the keys set)' },
  'base-url': { type: 'string', description: 'the provider endpoint (default from env or cordage.yml)' },
  'no-key': { type: 'boolean', description: 'send no API key to --base-url (a keyless server on another host)' },
  cassette: { type: 'string', description: 'replay recorded model turns from this file (no network)' },
  record: { type: 'string', description: "record the real model's turns into this cassette file" },
  'max-turns': { type: 'string', description: 'stop after this many model turns' },
} satisfies Options

/** Options shared by `run` and `chat`. */
export const agentOptions = {
  json: { type: 'boolean', description: 'print progress as JSON lines (one agent event per line)' },
  resume: { type: 'string', description: 'continue this session (id or .jsonl file)' },
  system: { type: 'string', description: 'the system prompt (default from cordage.yml or a built-in one)' },
  yes: { type: 'boolean', description: 'approve every call a policy asks about without prompting (headless: plans too)' },
  no: { type: 'boolean', description: 'deny every call a policy asks about without prompting (headless: plans too)' },
  plan: { type: 'boolean', description: 'start in plan mode: tools that write are denied until you approve a plan' },
} satisfies Options

/** Parses `argv` against `options` (strict: unknown flags are usage errors). */
export function parse(argv: string[], options: Options): { values: Values; positionals: string[] } {
  try {
    const clean = Object.fromEntries(Object.entries(options).map(([key, { description: _description, ...rest }]) => [key, rest]))
    const { values, positionals } = parseArgs({ args: argv, options: clean, allowPositionals: true, strict: true })
    return { values: values as Values, positionals }
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message.replace(/\. To specify a positional argument.*$/s, '') : String(error))
  }
}

/** Help text lines for `options`, aligned. */
export function describeOptions(options: Options): string[] {
  const rows = Object.entries(options).map(([key, option]) => {
    const flag = `${option.short ? `-${option.short}, ` : '    '}--${key}${option.type === 'string' ? ' <value>' : ''}`
    return [flag, option.description ?? ''] as const
  })
  const width = Math.max(0, ...rows.map(([flag]) => flag.length))
  return rows.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`)
}

/** A string option's value, or undefined. */
export function stringOption(values: Values, key: string): string | undefined {
  const value = values[key]
  return typeof value === 'string' ? value : undefined
}

/** A positive integer option, or undefined; anything else is a usage error. */
export function integerOption(values: Values, key: string): number | undefined {
  const raw = stringOption(values, key)
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0) throw new CliError(`--${key} expects a positive integer, got "${raw}"`)
  return value
}
