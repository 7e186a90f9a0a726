import type { Context } from 'cordis'
import type { AgentNotice } from './notice.js'
import type { JobSnapshot, JobsService } from './jobs.js'
import type { CodeModeService } from './code-mode.js'

declare module 'cordis' {
  interface Context {
    jobs: JobsService
    codeMode: CodeModeService
  }

  interface Events {
    /** Emit `(job)` once a job ends (exited, killed or failed), with its final public snapshot; observe-only. */
    'jobs/completed'(job: JobSnapshot): void
    /** Emit `(notice)`: every agent run in progress adds it as context before its next model request; observe-only. */
    'agent/notice'(notice: AgentNotice): void
  }
}

export type { AgentNotice } from './notice.js'
export type { CodeModeService, CodeRunOptions, CodeRunOutput, CodeHostFunction, CodeRunFailureKind } from './code-mode.js'
export { JobSnapshotSchema } from './jobs.js'
export type { JobsService, JobSnapshot, JobState, JobExit, JobStartOptions, JobHandle, JobRead } from './jobs.js'

/** A Cordis context that has the `jobs` service (what `ctx.inject(['jobs'], (ctx) => …)` hands a callback). */
export type JobsContext = Context & { jobs: JobsService }
