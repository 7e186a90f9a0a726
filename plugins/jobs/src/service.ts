import { Context, Service } from 'cordis'
import type { ToolRegistry } from '@cordage/registry'
import { Config, inject } from './config.js'
import { jobKillTool } from './job-kill.js'
import { jobListTool } from './job-list.js'
import { jobOutputTool } from './job-output.js'
import { lineageOf, type AgentLineage, type JobHandle, type JobRead, type JobSnapshot, type JobStartOptions, type JobsService } from '@cordage/services'
import { completionContext } from './describe.js'
import { JobTable, type CallerLineage } from './table.js'

/**
 * The `jobs` service: background work started by other tools. Owners `start` a job (it becomes an
 * effect of the caller's fiber), feed it output and report its end; `job_output`, `job_list` and
 * `job_kill` expose public snapshots to the model. Unloading the service kills every running job.
 */
export class Jobs extends Service implements JobsService {
  static readonly inject = inject
  static readonly Config = Config

  private readonly table: JobTable
  private readonly lineage: CallerLineage

  constructor(ctx: Context, config: Config) {
    super(ctx, 'jobs')
    const logger = ctx.logger('jobs')
    const completed = (job: JobSnapshot, owner: AgentLineage | undefined): void => {
      ctx.emit('jobs/completed', job)
      // Only the agent that started the job and its ancestors hear of it: they are the ones who may read it.
      ctx.emit('agent/notice', owner ? { ...completionContext(job), audience: owner } : completionContext(job))
    }
    this.table = new JobTable(config, completed, (message) => logger.warn(message))
    const table = this.table
    // Who started whom is the subagents service's to say; without it every agent is top-level.
    this.lineage = (agent) => lineageOf(ctx.get('subagents'), agent)
    ctx.effect(() => () => table.killAll('the jobs service was unloaded'), 'jobs: kill running jobs on unload')
    const tools: ToolRegistry = ctx.tools
    for (const tool of [jobOutputTool(table, this.lineage), jobListTool(table, this.lineage), jobKillTool(table, this.lineage)]) tools.register(tool)
  }

  /**
   * Starts a job owned by the calling plugin: unloading the caller kills it. The owner feeds output
   * and reports the end through the returned handle. With `agent`, the job belongs to that agent.
   */
  start(options: JobStartOptions): JobHandle {
    const table = this.table
    // The lineage is taken now: the parent still sees the job after the child that started it ended.
    const handle = table.start(options, options.agent === undefined ? undefined : this.lineage(options.agent))
    // The disposer returns the kill, so unloading the owner waits until the job has stopped.
    const release = this.ctx.effect(
      () => () =>
        table.kill(handle.id, 'its owner was unloaded').then(
          () => {},
          () => {},
        ),
      `jobs.start(${handle.id})`,
    )
    table.bindRelease(handle.id, release)
    return handle
  }

  /** The public snapshot of a job, or undefined when unknown. */
  get(id: string): JobSnapshot | undefined {
    try {
      return this.table.snapshot(id)
    } catch {
      return undefined
    }
  }

  /** Snapshots of every known job, oldest first. */
  list(): JobSnapshot[] {
    return this.table.list()
  }

  /** Reads up to `max` characters from absolute `offset`; throws `UNKNOWN_JOB` / `INVALID_OFFSET`. */
  read(id: string, offset = 0, max = 20_000): JobRead {
    return this.table.read(id, offset, max)
  }

  /** Resolves once output exists past `offset`, the job ended, `ms` passed or `signal` aborted. */
  wait(id: string, offset: number, ms: number, signal?: AbortSignal): Promise<void> {
    return this.table.wait(id, offset, ms, signal)
  }

  /** Stops a running job and resolves once its owner reported the end; false if it had already ended. */
  kill(id: string, reason?: string): Promise<boolean> {
    return this.table.kill(id, reason)
  }
}
