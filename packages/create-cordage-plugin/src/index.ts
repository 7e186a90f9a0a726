export { scaffold, type ScaffoldOptions, type ScaffoldResult } from './scaffold.js'
export { pluginNames, type PluginNames } from './names.js'
export { ScaffoldError } from './errors.js'
export { VERSIONS } from './manifest.js'
