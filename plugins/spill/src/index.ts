import { Spill } from './service.js'

export { name, inject, Config } from './config.js'
export { Spill }
export type { SpillInput, SpillSaved, SpillService } from '@cordage/services'
export { SpillStoreError, SpillConfigError } from './errors.js'

/** The plugin: the `spill` service class (its static `inject` and `Config` are the ones exported here). */
export default Spill
