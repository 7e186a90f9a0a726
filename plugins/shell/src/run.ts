import { spawn, type ChildProcess } from 'node:child_process'
import { ProcessTree } from '@cordage/process'
import { errorMessage } from '@cordage/core'

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
  /** Receives output as it arrives; a returned promise pauses the stream until it settles (back-pressure). */
  onStdout(chunk: Buffer): Promise<void> | void
  onStderr(chunk: Buffer): Promise<void> | void
}

/** A started command: `done` settles only once every process it started is dead. */
export interface RunningCommand {
  readonly pid: number | undefined
  readonly done: Promise<RunOutcome>
  /** True until the shell process itself has exited. */
  isRunning(): boolean
  /** Kills its process tree (SIGTERM, SIGKILL after the grace) and resolves once `done` has. */
  stop(): Promise<RunOutcome>
}

/**
 * Runs `<shell> -c <command>` as the leader of its own session, with stdin closed and output streamed to
 * the callbacks (nothing is buffered here). Every process it starts inherits the tree's marker: when the
 * shell exits, whatever it left running (`cmd &`, `setsid cmd &`, a double-forked daemon) is killed too,
 * so nothing outlives the call.
 */
export function spawnCommand(options: SpawnOptions): RunningCommand {
  const tree = new ProcessTree()
  let subprocess: ChildProcess
  try {
    subprocess = spawn(options.shell, ['-c', options.command], {
      cwd: options.cwd,
      env: tree.environment(options.env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    // Synchronous failures (a NUL in the command, a bad argument) are spawn failures like ENOENT.
    const done = Promise.resolve<RunOutcome>({ exitCode: null, signal: null, spawnError: spawnMessage(error, options) })
    return { pid: undefined, done, stop: () => done, isRunning: () => false }
  }
  const pid = subprocess.pid
  if (pid !== undefined) tree.adopt(pid)
  let running = pid !== undefined
  for (const [stream, receive] of [
    [subprocess.stdout!, options.onStdout],
    [subprocess.stderr!, options.onStderr],
  ] as const) {
    stream.on('data', (chunk: Buffer) => {
      const wait = receive(chunk)
      if (!wait) return
      stream.pause()
      void wait.then(() => stream.resume())
    })
  }
  // `exit`: the shell is gone; `close`: every writer of its pipes is gone too; `error`: it never started.
  const exited = new Promise<RunOutcome>((resolve) => {
    subprocess.once('exit', (exitCode, signal) => {
      running = false
      resolve({ exitCode, signal })
    })
    subprocess.once('error', (error) => {
      running = false
      resolve({ exitCode: null, signal: null, spawnError: spawnMessage(error, options) })
    })
  })
  const closed = new Promise<void>((resolve) => subprocess.once('close', () => resolve()))
  let stopping: Promise<unknown> | undefined
  const stop = () => {
    if (pid !== undefined) stopping ??= tree.terminate({ graceMs: options.killGraceMs })
    return done
  }
  const done = (async (): Promise<RunOutcome> => {
    const exit = await exited
    if (pid === undefined || exit.spawnError) return exit
    // Whatever the shell left running dies with it.
    await (stopping ??= tree.terminate({ graceMs: options.killGraceMs }))
    // The pipes close once every writer is gone; a writer that escaped the tree (its marker removed) cannot hold the call.
    let timer: NodeJS.Timeout | undefined
    const drained = await Promise.race([closed.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(resolve, 1000, false)))])
    clearTimeout(timer)
    if (!drained) {
      subprocess.stdout!.destroy()
      subprocess.stderr!.destroy()
    }
    return exit
  })()
  return { pid, done, stop, isRunning: () => running }
}

function spawnMessage(error: unknown, options: SpawnOptions): string {
  const detail = errorMessage(error)
  return `could not start the shell "${options.shell}" in ${options.cwd}: ${detail.split('\n')[0]!.trim()}`
}
