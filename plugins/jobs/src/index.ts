import type { JobSnapshot } from './types.js'
import { Jobs } from './service.js'

declare module 'cordis' {
  interface Context {
    jobs: Jobs
  }

  interface Events {
    /** Emit `(job)` once a job ends (exited, killed or failed), with its final public snapshot; observe-only. */
    'jobs/completed'(job: JobSnapshot): void
  }
}

export { Jobs }
export default Jobs
export type { JobRead } from './table.js'
export type { BufferRead } from './buffer.js'
export { JobSnapshotSchema } from './types.js'
export type { JobSnapshot, JobState, JobExit, JobStartOptions, JobHandle } from './types.js'
export { UnknownJobError, JobOffsetError } from './errors.js'
export { completionContext, describeJob, describeState } from './describe.js'
