import { Web } from './service.js'

export { name, inject, Config } from './config.js'
export { Web }
export { braveProvider, searxngProvider } from './providers.js'
export { WebError, type WebErrorCode } from './errors.js'

/** The plugin: the `web` service class (its static `inject` and `Config` are the ones exported here). */
export default Web
