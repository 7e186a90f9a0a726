export { main, type MainIo } from './main.js'
export { commands, findCommand, type Command, type CommandInput } from './commands/index.js'
export {
  CassetteModel,
  RecordingModel,
  cassettePlugin,
  loadCassette,
  parseCassette,
  type Cassette,
  type CassetteTurn,
  type CassetteModelOptions,
} from './cassette.js'
export { readConfig, parseConfig, type CordageConfig, type PluginEntry, type ModelSettings, type AgentSettings } from './config.js'
export { resolvePlugins, loadPlugins, importPlugin, pluginOf, configIssues, type ResolvedPlugin } from './plugins.js'
export { defaultPreset } from './preset.js'
export { startRuntime, type LoadedPlugin, type Runtime, type RuntimeOptions } from './runtime.js'
export { reloadConfig, watchConfig, type ConfigWatcher, type ReloadOptions, type ReloadReport, type WatchOptions } from './reload.js'
export { chooseModel, startModel, type ModelChoice, type ModelFlags } from './model.js'
export { Output, useColor } from './output.js'
export { CliError, EXIT } from './errors.js'
export { Progress, summarize } from './progress.js'
