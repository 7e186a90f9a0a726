import { execa } from 'execa'
import { ProcessTree } from '@cordage/process'
import { errorMessage } from '@cordage/core'

/** How one hook command ended. */
export type HookOutcome =
  { kind: 'exit'; code: number; stdout: string; stderr: string } | { kind: 'timeout'; timeoutMs: number; stderr: string } | { kind: 'error'; message: string }

export interface RunOptions {
  input: string
  cwd: string
  /** The whole environment of the hook (nothing is inherited: callers filter out credentials). */
  env: Record<string, string>
  timeoutMs: number
  signal?: AbortSignal
  /** Time between SIGTERM and SIGKILL for the hook's processes. */
  killGraceMs?: number
}

const MAX_OUTPUT = 4 * 1024 * 1024

/** Runs hooks and remembers the running ones, so unloading can kill their processes. */
export class HookRunner {
  private readonly running = new Set<() => Promise<unknown>>()

  /** See {@link runHook}. */
  run(command: string, options: RunOptions): Promise<HookOutcome> {
    return runHook(command, options, this.running)
  }

  /** Kills every process of every running hook (their calls see an error outcome); resolves once all are gone. */
  async killAll(): Promise<void> {
    await Promise.all([...this.running].map((kill) => kill()))
  }
}

/**
 * Runs `command` with `/bin/sh -c` as the leader of its own session, writes `input` to stdin and collects
 * stdout/stderr. At the timeout (or when `signal` aborts) every process it started gets SIGTERM, then
 * SIGKILL; whatever it leaves running when it exits (`setsid daemon &` included) is killed too. Never
 * rejects, and settles only once none of its processes is left.
 */
export async function runHook(command: string, options: RunOptions, running = new Set<() => Promise<unknown>>()): Promise<HookOutcome> {
  const tree = new ProcessTree()
  let subprocess: ReturnType<typeof execa>
  try {
    subprocess = execa(command, {
      shell: true,
      detached: true,
      cwd: options.cwd,
      env: tree.environment(options.env),
      extendEnv: false,
      input: options.input,
      reject: false,
      maxBuffer: MAX_OUTPUT,
      stripFinalNewline: false,
    })
  } catch (error) {
    return { kind: 'error', message: errorMessage(error) }
  }
  if (subprocess.pid !== undefined) tree.adopt(subprocess.pid)
  let timedOut = false
  let stopping: Promise<unknown> | undefined
  const kill = () => (stopping ??= tree.terminate({ graceMs: options.killGraceMs ?? 500 }))
  const onAbort = () => void kill()
  const timer = setTimeout(() => {
    timedOut = true
    void kill()
  }, options.timeoutMs)
  options.signal?.addEventListener('abort', onAbort, { once: true })
  running.add(kill)
  try {
    const result = await subprocess
    if (timedOut) return { kind: 'timeout', timeoutMs: options.timeoutMs, stderr: String(result.stderr ?? '') }
    if (typeof result.exitCode !== 'number') {
      return {
        kind: 'error',
        message: result.signal ? `killed by ${result.signal}` : ((result as { shortMessage?: string }).shortMessage ?? 'the hook did not exit normally'),
      }
    }
    if ((result as { isMaxBuffer?: boolean }).isMaxBuffer) return { kind: 'error', message: `the hook wrote more than ${MAX_OUTPUT} bytes` }
    return { kind: 'exit', code: result.exitCode, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') }
  } catch (error) {
    return { kind: 'error', message: errorMessage(error) }
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', onAbort)
    // Whatever the hook left running (stragglers of a killed hook, a daemon it started) ends with it.
    await kill()
    running.delete(kill)
  }
}
