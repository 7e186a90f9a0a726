import { Jobs } from './service.js'

export { name, inject, Config } from './config.js'
export { Jobs }
export { UnknownJobError, JobOffsetError } from './errors.js'

/** The plugin: the `jobs` service class (its static `inject` and `Config` are the ones exported here). */
export default Jobs
