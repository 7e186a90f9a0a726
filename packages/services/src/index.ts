import type { Context } from 'cordis'
import type { ChildRunEvent } from './child.js'
import type { CodeRunner } from './code.js'
import type { AgentNotice } from './notice.js'
import type { SubagentService } from './subagents.js'
import type { JobSnapshot, JobsService } from './jobs.js'

declare module 'cordis' {
  interface Context {
    jobs: JobsService
    codeMode: CodeRunner
    subagents: SubagentService
  }

  interface Events {
    /** Emit `(job)` once a job ends (exited, killed or failed), with its final public snapshot; observe-only. */
    'jobs/completed'(job: JobSnapshot): void
    /** Emit `(notice)`: every agent run in progress adds it as context before its next model request; observe-only. */
    'agent/notice'(notice: AgentNotice): void
    /** Emit `(event)` when a child run starts or ends; observe-only (progress displays). */
    'agent/child'(event: ChildRunEvent): void
  }
}

export type { AgentNotice } from './notice.js'
export type { ChildRunEvent } from './child.js'
export type { SubagentService, ChildRunOptions, ChildRunCaller, ChildRunResult } from './subagents.js'
export type { CodeRunner, CodeRunOptions, CodeRunResult, CodeHostFunction } from './code.js'
export { JobSnapshotSchema } from './jobs.js'
export type { JobsService, JobSnapshot, JobState, JobExit, JobStartOptions, JobHandle, JobRead } from './jobs.js'

/** A Cordis context that has the `jobs` service (what `ctx.inject(['jobs'], (ctx) => …)` hands a callback). */
export type JobsContext = Context & { jobs: JobsService }
