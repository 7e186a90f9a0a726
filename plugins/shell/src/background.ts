import type { JobsService } from '@cordage/services'
import { JobsUnavailableError, ShellSpawnError } from './errors.js'
import { spawnCommand, type RunningCommand } from './run.js'

/** What a background run needs. */
export interface BackgroundOptions {
  shell: string
  command: string
  cwd: string
  env: Record<string, string>
  killGraceMs: number
  jobs: JobsService | undefined
  /** The calling agent (`exec.agent`): the job belongs to it. */
  agent?: string
}

/**
 * Starts a command as a job owned by the caller of `jobs` (the shell plugin): output streams into the
 * job, `job_kill` and unloading kill its process tree, and the exit is reported when the tree is dead.
 */
export async function startBackground(options: BackgroundOptions): Promise<{ kind: 'background'; jobId: string }> {
  const jobs = options.jobs
  if (!jobs) throw new JobsUnavailableError()
  let handle: ReturnType<JobsService['start']> | undefined
  const command: RunningCommand = spawnCommand({
    ...options,
    onStdout: (chunk) => handle?.write(chunk, 'stdout'),
    onStderr: (chunk) => handle?.write(chunk, 'stderr'),
  })
  if (command.pid === undefined) {
    const outcome = await command.done
    throw new ShellSpawnError(outcome.spawnError ?? 'the shell could not be started')
  }
  // Output events cannot fire before this synchronous assignment.
  try {
    handle = jobs.start({ kind: 'bash', title: options.command, agent: options.agent, kill: async () => void (await command.stop()) })
  } catch (error) {
    await command.stop()
    throw error
  }
  const job = handle
  void command.done.then((outcome) => (outcome.spawnError ? job.fail(outcome.spawnError) : job.exit(outcome)))
  return { kind: 'background', jobId: job.id }
}
