import { existsSync, statSync } from 'node:fs'
import { createRequire, isBuiltin } from 'node:module'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Context, Fiber, Plugin } from 'cordis'
import type { PluginEntry } from './config.js'
import { CordageError, isSchemastery, unknownConfigKeys, type ConfigIssue } from '@cordage/core'
import { FiberState } from '@cordage/registry'
import { CliConfigError, CliError, errorMessage } from './errors.js'
import { installedEntry, packageEntry } from './package-entry.js'

/** A plugin entry whose module was imported and whose config passed the plugin's `Config`. */
export interface ResolvedPlugin {
  /** The name as written in cordage.yml (or the preset). */
  spec: string
  plugin: Plugin
  config: unknown
}

/** Where a spec was looked for, for the "not found" message. */
function candidates(spec: string): string[] {
  if (spec.startsWith('.') || isAbsolute(spec)) return [spec]
  // `fs` is shorthand for `@cordage/plugin-fs` (or a third-party `cordage-plugin-fs`).
  if (!spec.includes('/') && !spec.startsWith('@')) return [spec, `@cordage/plugin-${spec}`, `cordage-plugin-${spec}`]
  return [spec]
}

/**
 * Resolves a spec to a module URL: a path (a file, or a package directory through its package.json)
 * from `baseDir`; a name from the `node_modules` folders at and above `baseDir`, then from this
 * package's own. `NODE_PATH` is never consulted (see package-entry.ts).
 */
function locate(spec: string, baseDir: string): { url?: string; tried: string[]; problem?: string } {
  const tried: string[] = []
  const local = createRequire(join(baseDir, 'cordage.yml'))
  for (const name of candidates(spec)) {
    if (name.startsWith('.') || isAbsolute(name)) {
      const path = resolve(baseDir, name)
      tried.push(path)
      if (!existsSync(path)) continue
      if (existsSync(join(path, 'package.json')) && statSync(path).isDirectory()) {
        const entry = packageEntry(path)
        return entry.file ? { url: pathToFileURL(entry.file).href, tried } : { tried, problem: entry.problem }
      }
      try {
        return { url: pathToFileURL(local.resolve(path)).href, tried }
      } catch {
        continue
      }
    }
    tried.push(name)
    // `fs` must never resolve to Node's own module.
    if (isBuiltin(name)) continue
    const installed = installedEntry(name, baseDir)
    if (installed) return installed.file ? { url: pathToFileURL(installed.file).href, tried } : { tried, problem: installed.problem }
    try {
      // Not installed next to cordage.yml: the packages the command itself depends on (ESM resolution, no NODE_PATH).
      return { url: import.meta.resolve(name), tried }
    } catch {
      continue
    }
  }
  return { tried }
}

/** The Cordis plugin a module exports: its default export, or the module itself when it has `apply`. */
export function pluginOf(module: Record<string, any>): Plugin | undefined {
  for (const candidate of [module.default, module]) {
    if (typeof candidate === 'function') return candidate as Plugin
    if (candidate && typeof candidate === 'object' && typeof candidate.apply === 'function') return candidate as Plugin
  }
  return undefined
}

/** Imports the module a spec names; undefined plugin when the module exports none (a placeholder package). */
export async function importPlugin(spec: string, baseDir: string, where: string): Promise<Plugin | undefined> {
  const { url, tried, problem } = locate(spec, baseDir)
  if (problem) throw new CliConfigError(`${where}: plugin ${spec}: cannot load it: ${problem}`)
  if (!url)
    throw new CliConfigError(`${where}: cannot find plugin "${spec}"; tried ${tried.join(', ')} (from ${baseDir} and from the cordage command's own packages)`)
  let module: Record<string, any>
  try {
    module = await import(url)
  } catch (error) {
    throw new CliError(`${where}: plugin ${spec}: failed to import: ${errorMessage(error)}`)
  }
  return pluginOf(module)
}

/** The config problems `plugin.Config` reports, each as `field: message`; unknown keys included, for any plugin. */
export function configIssues(plugin: Plugin, config: unknown): string[] {
  const schema = (plugin as { Config?: any }).Config
  if (!schema) return []
  const issues = validationIssues(schema, config)
  // A Config made strict with `strictConfig` reported unknown keys already; a plain schemastery one drops them.
  if (issues.length === 0 && isSchemastery(schema)) return unknownConfigKeys(schema, config).map(formatConfigIssue)
  return issues
}

function validationIssues(schema: any, config: unknown): string[] {
  try {
    if (schema['~standard']) {
      const result = schema['~standard'].validate(config)
      if (result && typeof result.then === 'function') return ["the plugin's Config validates asynchronously, which is not supported"]
      return (result.issues ?? []).map(formatIssue)
    }
    if (typeof schema === 'function') schema(config)
  } catch (error) {
    if (CordageError.is(error) && error.code === 'INVALID_CONFIG' && Array.isArray((error as { issues?: unknown }).issues)) {
      return (error as unknown as { issues: ConfigIssue[] }).issues.map(formatConfigIssue)
    }
    return [stripPath(errorMessage(error))]
  }
  return []
}

function formatConfigIssue(issue: ConfigIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message
}

function formatIssue(issue: { message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }): string {
  const keys = (issue.path ?? []).map((part) => (typeof part === 'object' && part !== null ? part.key : part))
  const path = keys.map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index ? '.' : ''}${String(key)}`)).join('')
  const message = stripPath(issue.message)
  return path ? `${path}: ${message}` : message
}

// schemastery prefixes its messages with the path (`$.root expected …`); the path is printed separately.
function stripPath(message: string): string {
  return message.replace(/^\$\S*\s+/, '')
}

/** Imports every entry and validates its config; throws one error listing every problem before anything starts. */
export async function resolvePlugins(
  entries: PluginEntry[],
  baseDir: string,
  where: string,
  options: { skipPlaceholders?: boolean } = {},
): Promise<ResolvedPlugin[]> {
  const resolved: ResolvedPlugin[] = []
  const problems: string[] = []
  for (const entry of entries) {
    const plugin = await importPlugin(entry.spec, baseDir, where)
    if (!plugin) {
      if (!options.skipPlaceholders)
        problems.push(`${where}: plugin ${entry.spec}: the package exports no Cordis plugin (expected a default export or an \`apply\` function)`)
      continue
    }
    for (const issue of configIssues(plugin, entry.config)) problems.push(`${where}: plugin ${entry.spec}: ${issue}`)
    resolved.push({ spec: entry.spec, plugin, config: entry.config })
  }
  if (problems.length) throw new CliConfigError(problems.join('\n'))
  return resolved
}

/** Loads resolved plugins in order; reports a plugin that failed or waits for a service nobody provides. */
export async function loadPlugins(ctx: Context, plugins: ResolvedPlugin[], where: string): Promise<Fiber[]> {
  const fibers: Array<{ spec: string; fiber: Fiber }> = []
  try {
    for (const { spec, plugin, config } of plugins) {
      try {
        fibers.push({ spec, fiber: await ctx.plugin(plugin, config as any) })
      } catch (error) {
        const message = `${where}: plugin ${spec}: failed to start: ${errorMessage(error)}`
        throw CordageError.is(error) && error.code === 'INVALID_CONFIG' ? new CliConfigError(message) : new CliError(message)
      }
    }
    // A fiber still pending after every plugin loaded waits for a service that nothing provides.
    for (const { spec, fiber } of fibers) {
      if (fiber.state !== FiberState.PENDING) continue
      const missing = Object.entries(fiber.inject ?? {})
        .filter(([name, meta]) => (meta as any)?.required !== false && ctx.get(name) === undefined)
        .map(([name]) => name)
      throw new CliError(
        `${where}: plugin ${spec}: did not start: it needs ${missing.length ? missing.map((name) => `"${name}"`).join(', ') : 'a service'} that no loaded plugin provides`,
      )
    }
  } catch (error) {
    // Nothing of a failed load stays behind (a live reload keeps running after it).
    for (const { fiber } of fibers.toReversed()) await fiber.dispose()
    throw error
  }
  return fibers.map(({ fiber }) => fiber)
}
