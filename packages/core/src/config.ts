import { errorMessage } from './failure.js'
import Schema from 'schemastery'
import { CordageError } from './errors.js'
import type { JsonSchemaNode } from './schema.js'
import { unknownKeys, type KeyShape } from './config-keys.js'

/** One problem in a plugin's config: `path` like `rules[0].when` (`''` for the root). */
export interface ConfigIssue {
  path: string
  message: string
}

/**
 * What a user may write for a plugin whose resolved config is `C`: every key optional, nested plain
 * objects too (the schema fills defaults); a dictionary's entries and arrays' items are typed as entries. Plugins type their
 * schema `Schema<ConfigInput<Config>, Config>`.
 */
export type ConfigInput<C> = C extends readonly unknown[]
  ? C
  : C extends (...args: never[]) => unknown
    ? C
    : C extends object
      ? string extends keyof C
        ? { [K in keyof C]: ConfigInput<C[K]> }
        : { [K in keyof C]?: ConfigInput<C[K]> }
      : C

/** A plugin's config is invalid (code `INVALID_CONFIG`); thrown at load, naming the plugin and every issue. */
export class ConfigError extends CordageError {
  constructor(
    readonly plugin: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super('INVALID_CONFIG', issues.map((issue) => `${plugin}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`).join('\n'))
  }
}

/** Unknown keys in `config` (the raw config, or one schemastery already parsed: it keeps unknown keys). */
export function unknownConfigKeys(shape: KeyShape, config: unknown): ConfigIssue[] {
  return unknownKeys(shape, config)
}

const STRICT = 'cordage:strict-config'

interface StrictSchema extends Schema {
  plugin: string
}

// schemastery resolves each config through its type's resolver with the raw input, so a wrapper type sees
// the keys `object` would otherwise carry along unchecked. Errors that are not schemastery's own propagate
// unchanged through `~standard.validate`, so Cordis rejects `ctx.plugin(...)` with this `ConfigError`.
Schema.extend(STRICT, (data, schema, options, strict) => {
  const { plugin, inner } = schema as StrictSchema
  const issues = unknownKeys(inner!, data)
  if (issues.length) throw new ConfigError(plugin, issues)
  try {
    return Schema.resolve(data, inner!, options, strict)
  } catch (error) {
    if (!Schema.ValidationError.is(error)) throw error
    const path = formatPath((error as { options?: Schemastery.Options }).options?.path ?? [])
    throw new ConfigError(plugin, [{ path, message: errorMessage(error).replace(/^\$\S*\s+/, '') }])
  }
})

/**
 * Makes a plugin's `Config` strict: an unknown key anywhere (`rulez`, `whne`) or a wrong type fails the load
 * with `ConfigError` naming the plugin, the key and the nearest valid key. A schemastery schema stays a
 * schemastery schema (defaults, descriptions and types are kept). Any other Standard Schema (zod) keeps
 * its own methods (`parse`) and needs its JSON Schema as `shape` to know the valid keys; there an object
 * with `properties` is closed unless `additionalProperties` or `patternProperties` opens it.
 */
export function strictConfig<S, T>(plugin: string, schema: Schema<S, T>): Schema<S, T>
export function strictConfig<C extends StandardConfig>(plugin: string, schema: C, shape: JsonSchemaNode): C
export function strictConfig(plugin: string, schema: Schema | StandardConfig, shape?: JsonSchemaNode): unknown {
  if (typeof schema === 'function' && typeof schema.type === 'string') {
    return Schema({ type: STRICT, inner: schema, meta: { ...schema.meta }, plugin } as Partial<Schema> & { plugin: string })
  }
  const standard = (schema as StandardConfig)['~standard']
  const validate = (value: unknown) => {
    const unknown = shape ? unknownKeys(shape, value) : []
    if (unknown.length) throw new ConfigError(plugin, unknown)
    const result = standard.validate(value) as StandardResult | Promise<unknown>
    if ('then' in result) throw new ConfigError(plugin, [{ path: '', message: 'the config validates asynchronously, which is not supported' }])
    if (!result.issues?.length) return result
    throw new ConfigError(
      plugin,
      result.issues.map((issue) => ({
        path: formatPath((issue.path ?? []).map((part) => (typeof part === 'object' && part !== null ? part.key : part))),
        message: issue.message,
      })),
    )
  }
  return Object.create(schema, { '~standard': { value: { ...standard, validate }, enumerable: false } })
}

/** The part of a Standard Schema a plugin `Config` needs. */
export interface StandardConfig {
  readonly '~standard': { readonly version: 1; readonly vendor: string; validate(value: unknown): unknown }
}

interface StandardResult {
  value?: unknown
  issues?: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }>
}

/** `['rules', 0, 'when']` → `rules[0].when`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index ? '.' : ''}${String(key)}`)).join('')
}

export type { KeyShape }
