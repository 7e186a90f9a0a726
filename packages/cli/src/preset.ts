import type { PluginEntry } from './config.js'

/**
 * The plugins loaded when there is no cordage.yml: every first-party tool family that needs no external
 * service, with its defaults (file tools rooted at the working directory). Packages that do not yet
 * export a plugin are skipped.
 */
export const defaultPreset: readonly PluginEntry[] = Object.freeze([
  { spec: '@cordage/plugin-spill', config: undefined },
  { spec: '@cordage/plugin-policy', config: undefined },
  { spec: '@cordage/plugin-jobs', config: undefined },
  { spec: '@cordage/plugin-fs', config: undefined },
  { spec: '@cordage/plugin-shell', config: undefined },
  { spec: '@cordage/plugin-code-mode', config: undefined },
  { spec: '@cordage/plugin-skill', config: undefined },
  { spec: '@cordage/plugin-todo', config: undefined },
  { spec: '@cordage/plugin-interaction', config: undefined },
])
