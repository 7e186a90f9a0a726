import { readFileSync } from 'node:fs'
import { HooksConfigError } from './errors.js'
import { errorMessage } from '@cordage/core'

/** The events this plugin runs; other Claude Code events in a settings file are skipped with a warning. */
export const EVENTS = ['PreToolUse', 'PostToolUse'] as const
export type HookEvent = (typeof EVENTS)[number]

/** One command hook, as Claude Code writes it (`timeout` in seconds). */
export interface CommandHook {
  type: 'command'
  command: string
  timeout?: number
}

/** A matcher group: tool matcher plus the commands it runs. */
export interface MatcherGroup {
  matcher?: string
  hooks: CommandHook[]
}

/** The `hooks` section of a Claude Code settings.json (only tool events are used). */
export type HooksSection = Partial<Record<string, MatcherGroup[]>>

/** A checked command, with its matcher compiled. */
export interface CompiledHook {
  command: string
  timeoutMs: number
  matches(names: readonly string[]): boolean
  /** Where it came from, for messages (`settings.json hooks.PreToolUse[0].hooks[1]`). */
  origin: string
}

export type CompiledHooks = Record<HookEvent, CompiledHook[]>

/** Reads the `hooks` key of a Claude Code settings file; a missing file or bad JSON is a load error. */
export function readSettingsHooks(path: string): HooksSection {
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new HooksConfigError(`hooks: cannot read settingsFile ${path}: ${errorMessage(error)}`, { cause: error })
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new HooksConfigError(`hooks: settingsFile ${path} is not a JSON object`)
  const hooks = (parsed as { hooks?: unknown }).hooks
  if (hooks === undefined) return {}
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) throw new HooksConfigError(`hooks: settingsFile ${path}: "hooks" must be an object`)
  return hooks as HooksSection
}

/** Claude Code matchers: empty, missing or `*` match all; `A|B` names match exactly; anything else is a regex. */
export function compileMatcher(matcher: string | undefined): (names: readonly string[]) => boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return () => true
  if (/^[\w|-]+$/.test(matcher)) {
    const exact = new Set(matcher.split('|'))
    return (names) => names.some((name) => exact.has(name))
  }
  const pattern = new RegExp(matcher)
  return (names) => names.some((name) => pattern.test(name))
}

/** Checks and compiles sections in order; `warn` reports what is skipped (other events, non-command hooks). */
export function compileHooks(
  sections: Array<{ source: string; hooks: HooksSection }>,
  defaultTimeoutSeconds: number,
  warn: (message: string) => void,
): CompiledHooks {
  const compiled: CompiledHooks = { PreToolUse: [], PostToolUse: [] }
  for (const { source, hooks } of sections) {
    for (const [event, groups] of Object.entries(hooks)) {
      const where = `${source} hooks.${event}`
      if (!(EVENTS as readonly string[]).includes(event)) {
        warn(`${where}: the ${event} event is not supported by this plugin; skipped`)
        continue
      }
      if (!Array.isArray(groups)) throw new HooksConfigError(`hooks: ${where} must be an array of { matcher, hooks }`)
      groups.forEach((group, i) => {
        if (!group || typeof group !== 'object' || !Array.isArray(group.hooks)) throw new HooksConfigError(`hooks: ${where}[${i}].hooks must be an array`)
        if (group.matcher !== undefined && typeof group.matcher !== 'string') throw new HooksConfigError(`hooks: ${where}[${i}].matcher must be a string`)
        let matches: (names: readonly string[]) => boolean
        try {
          matches = compileMatcher(group.matcher)
        } catch (error) {
          throw new HooksConfigError(`hooks: ${where}[${i}].matcher: bad regular expression: ${errorMessage(error)}`)
        }
        group.hooks.forEach((hook, j) => {
          const origin = `${where}[${i}].hooks[${j}]`
          if (hook?.type !== 'command') {
            warn(`${origin}: hooks of type ${JSON.stringify(hook?.type)} are not supported (only "command"); skipped`)
            return
          }
          if (typeof hook.command !== 'string' || !hook.command.trim()) throw new HooksConfigError(`hooks: ${origin}.command must be a non-empty string`)
          if (hook.timeout !== undefined && !(typeof hook.timeout === 'number' && hook.timeout > 0))
            throw new HooksConfigError(`hooks: ${origin}.timeout must be a positive number of seconds`)
          compiled[event as HookEvent].push({ command: hook.command, timeoutMs: (hook.timeout ?? defaultTimeoutSeconds) * 1000, matches, origin })
        })
      })
    }
  }
  return compiled
}
