import { execa } from 'execa'
import { killGroup } from './tree.js'

/** How one command run ended. `spawnError` is set when the shell could not be started at all. */
export interface RunOutcome {
  exitCode: number | null
  signal: string | null
  spawnError?: string
}

/** What `spawnCommand` needs. */
export interface SpawnOptions {
  shell: string
  command: string
  cwd: string
  env: Record<string, string>
  killGraceMs: number
  onStdout(chunk: Buffer): void
  onStderr(chunk: Buffer): void
}

/** A started command: `done` settles only once its whole process group is dead. */
export interface RunningCommand {
  readonly pid: number | undefined
  readonly done: Promise<RunOutcome>
  /** True until the shell process itself has exited. */
  isRunning(): boolean
  /** Kills the process group (SIGTERM, SIGKILL after the grace) and resolves once `done` has. */
  stop(): Promise<RunOutcome>
}

/**
 * Runs `<shell> -c <command>` as the leader of its own process group, with stdin closed and output
 * streamed to the callbacks (nothing is buffered here). When the shell exits, members of its group that
 * are still alive (backgrounded children) are killed too, so nothing outlives the call.
 */
export function spawnCommand(options: SpawnOptions): RunningCommand {
  const subprocess = execa(options.shell, ['-c', options.command], {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    buffer: false,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
    cleanup: true,
  })
  const pid = subprocess.pid
  let running = pid !== undefined
  subprocess.stdout?.on('data', options.onStdout)
  subprocess.stderr?.on('data', options.onStderr)
  const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
    subprocess.once('exit', (exitCode, signal) => {
      running = false
      resolve({ exitCode, signal })
    })
  })
  const finished = subprocess.then((result) => result)
  let stopping: Promise<unknown> | undefined
  const stop = () => {
    if (pid !== undefined) stopping ??= killGroup(pid, options.killGraceMs)
    return done
  }
  const done = (async (): Promise<RunOutcome> => {
    if (pid === undefined) {
      const result = await finished
      return { exitCode: null, signal: null, spawnError: spawnMessage(result.message, options) }
    }
    const exit = await Promise.race([exited, finished.then((result) => ({ exitCode: result.exitCode ?? null, signal: result.signal ?? null }))])
    // Whatever the shell left running in its group dies with it.
    await (stopping ??= killGroup(pid, options.killGraceMs))
    // The streams close once every writer is gone; a writer that escaped the group (setsid) cannot hold the call.
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([finished.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(resolve, 1000, false)))])
    clearTimeout(timer)
    if (!drained) {
      subprocess.stdout?.destroy()
      subprocess.stderr?.destroy()
    }
    return exit
  })()
  void done.then(() => (running = false))
  return { pid, done, stop, isRunning: () => running }
}

function spawnMessage(message: string | undefined, options: SpawnOptions): string {
  const detail = message?.split('\n').find((line) => /ENOENT|EACCES|spawn/.test(line)) ?? message ?? 'unknown error'
  return `could not start the shell "${options.shell}" in ${options.cwd}: ${detail.trim()}`
}
