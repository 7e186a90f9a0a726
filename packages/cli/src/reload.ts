import { defaultPreset } from './preset.js'
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { readConfig } from './config.js'
import { CliConfigError, errorMessage } from './errors.js'
import type { Output } from './output.js'
import { loadPlugins, resolvePlugins, type ResolvedPlugin } from './plugins.js'
import type { LoadedPlugin, Runtime } from './runtime.js'

/** What one reload changed, by spec as written in cordage.yml. */
export interface ReloadReport {
  loaded: string[]
  reloaded: string[]
  unloaded: string[]
}

/** Where the config lives: the runtime's own `cwd` and `--config`. */
export interface ReloadOptions {
  cwd: string
  configFile?: string
}

// Entries are matched by spec and by occurrence, so a list naming one spec twice pairs them in order.
function keyed<T extends ResolvedPlugin>(entries: readonly T[]): Array<{ key: string; entry: T }> {
  const seen = new Map<string, number>()
  return entries.map((entry) => {
    const n = seen.get(entry.spec) ?? 0
    seen.set(entry.spec, n + 1)
    return { key: `${entry.spec}#${n}`, entry }
  })
}

/**
 * Applies the config file as it is now to a running runtime: entries whose config changed are disposed
 * and applied again, new ones loaded, removed ones unloaded; untouched plugins keep running. Every entry
 * is imported and validated before anything stops, and a plugin that fails to start puts back what was
 * stopped, so a rejected edit (thrown as the usual config error) leaves the composition as it was.
 */
export async function reloadConfig(runtime: Runtime, options: ReloadOptions): Promise<ReloadReport> {
  const path = resolve(options.cwd, options.configFile ?? 'cordage.yml')
  const where = options.configFile ? path : 'cordage.yml'
  const config = readConfig(options.cwd, options.configFile)
  if (!config) throw new CliConfigError(`${where}: the file was removed`)
  const next = keyed(
    await resolvePlugins(config.plugins ?? [...defaultPreset], config.baseDir, config.plugins ? where : 'default preset', {
      skipPlaceholders: !config.plugins,
    }),
  )
  const current = new Map(keyed(runtime.loaded).map(({ key, entry }) => [key, entry]))
  const keep = new Map<string, LoadedPlugin>()
  for (const { key, entry } of next) {
    const running = current.get(key)
    if (running && running.plugin === entry.plugin && isDeepStrictEqual(running.config, entry.config)) keep.set(key, running)
  }
  const stop = runtime.loaded.filter((entry) => ![...keep.values()].includes(entry))
  const start = next.filter(({ key }) => !keep.has(key))
  const report: ReloadReport = {
    loaded: start.filter(({ key }) => !current.has(key)).map(({ entry }) => entry.spec),
    reloaded: start.filter(({ key }) => current.has(key)).map(({ entry }) => entry.spec),
    unloaded: keyed(stop)
      .filter(({ key }) => !next.some((item) => item.key === key))
      .map(({ entry }) => entry.spec),
  }
  if (!stop.length && !start.length) return report
  for (const entry of stop.toReversed()) await entry.fiber.dispose()
  let fibers
  try {
    fibers = await loadPlugins(
      runtime.ctx,
      start.map(({ entry }) => entry),
      where,
    )
  } catch (error) {
    // Put back what was stopped, with the config it ran with.
    const restored = new Map<LoadedPlugin, LoadedPlugin>()
    for (const entry of stop) restored.set(entry, { ...entry, fiber: await runtime.ctx.plugin(entry.plugin, entry.config as any) })
    runtime.loaded = runtime.loaded.map((entry) => restored.get(entry) ?? entry)
    throw error
  }
  const started = new Map(start.map(({ key, entry }, index) => [key, { ...entry, fiber: fibers[index] }]))
  runtime.loaded = next.map(({ key }) => keep.get(key) ?? started.get(key)!)
  runtime.plugins = runtime.loaded.map((entry) => entry.spec)
  return report
}

/** A running watch on the config file. */
export interface ConfigWatcher {
  /** Stops watching; a reload already running finishes. */
  close(): void
  /** Settles when every reload triggered so far has finished. */
  idle(): Promise<void>
}

export interface WatchOptions extends ReloadOptions {
  output: Output
  /** A reload waits for this first (e.g. the agent turn in progress), so no tool disappears mid-turn. */
  busy?: () => Promise<unknown> | undefined
  /** Quiet time after the last change event before reloading (editors write in bursts). Default 100. */
  debounceMs?: number
  /** Called after each attempt with its report, or the error that rejected it. */
  onReload?: (outcome: ReloadReport | Error) => void
}

/**
 * Watches the config file's directory (editors often replace the file, which ends a watch on the file
 * itself) and reloads on each change of its text, one reload at a time.
 */
export function watchConfig(runtime: Runtime, options: WatchOptions): ConfigWatcher {
  const { output } = options
  const path = resolve(options.cwd, options.configFile ?? 'cordage.yml')
  const where = options.configFile ? path : 'cordage.yml'
  const read = () => (existsSync(path) ? readFileSync(path, 'utf8') : undefined)
  let seen = read()
  let timer: NodeJS.Timeout | undefined
  let queue = Promise.resolve()
  let closed = false

  async function attempt(): Promise<void> {
    const text = read()
    if (closed || text === seen) return
    seen = text
    await options.busy?.()
    if (closed) return
    try {
      const report = await reloadConfig(runtime, options)
      const parts = [
        ['loaded', report.loaded],
        ['reloaded', report.reloaded],
        ['unloaded', report.unloaded],
      ] as const
      const summary = parts
        .filter(([, specs]) => specs.length)
        .map(([verb, specs]) => `${verb} ${specs.join(', ')}`)
        .join('; ')
      output.error(output.style('dim', `${where} reloaded: ${summary || 'no plugin changed'} (${runtime.ctx.get('tools')!.list().length} tools)`))
      options.onReload?.(report)
    } catch (error) {
      output.error(output.style('red', `${where}: reload rejected, the running plugins are unchanged:\n${errorMessage(error)}`))
      options.onReload?.(error instanceof Error ? error : new Error(String(error)))
    }
  }

  const watcher: FSWatcher = watch(dirname(path), (_event, name) => {
    if (closed || (name !== null && name !== basename(path))) return
    clearTimeout(timer)
    timer = setTimeout(() => (queue = queue.then(attempt)), options.debounceMs ?? 100)
  })
  watcher.on('error', (error) => output.error(output.style('red', `${where}: watching stopped: ${errorMessage(error)}`)))
  return {
    close() {
      closed = true
      clearTimeout(timer)
      watcher.close()
    },
    idle: () => queue,
  }
}
