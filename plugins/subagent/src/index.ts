import { Subagents } from './service.js'

export { name, inject, Config } from './config.js'
export { Subagents }

/** The plugin: the `subagents` service class (its static `inject` and `Config` are the ones exported here). */
export default Subagents
