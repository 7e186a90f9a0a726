import { Jobs } from './service.js'

export { Jobs }
export default Jobs
export { UnknownJobError, JobOffsetError } from './errors.js'
