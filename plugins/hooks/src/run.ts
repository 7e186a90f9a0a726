import { execa } from 'execa'

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
  /** Time between SIGTERM and SIGKILL for the process group. */
  killGraceMs?: number
}

const MAX_OUTPUT = 4 * 1024 * 1024

/** Runs hooks and remembers the running ones, so unloading can kill their process groups. */
export class HookRunner {
  private readonly running = new Set<() => void>()

  /** See {@link runHook}. */
  run(command: string, options: RunOptions): Promise<HookOutcome> {
    return runHook(command, options, this.running)
  }

  /** Kills the process group of every running hook; their calls see an error outcome. */
  killAll(): void {
    for (const kill of this.running) kill()
  }
}

/**
 * Runs `command` with `/bin/sh -c` in its own process group, writes `input` to stdin and collects
 * stdout/stderr. At the timeout (or when `signal` aborts) the whole group gets SIGTERM, then SIGKILL.
 * Never rejects.
 */
export async function runHook(command: string, options: RunOptions, running = new Set<() => void>()): Promise<HookOutcome> {
  let subprocess: ReturnType<typeof execa>
  try {
    subprocess = execa(command, {
      shell: true,
      detached: true,
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      input: options.input,
      reject: false,
      maxBuffer: MAX_OUTPUT,
      stripFinalNewline: false,
    })
  } catch (error) {
    return { kind: 'error', message: (error as Error).message }
  }
  let timedOut = false
  let killed = false
  let escalate: NodeJS.Timeout | undefined
  const kill = () => {
    killed = true
    signalGroup(subprocess.pid, 'SIGTERM')
    escalate ??= setTimeout(() => signalGroup(subprocess.pid, 'SIGKILL'), options.killGraceMs ?? 500)
  }
  const timer = setTimeout(() => {
    timedOut = true
    kill()
  }, options.timeoutMs)
  options.signal?.addEventListener('abort', kill, { once: true })
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
    return { kind: 'error', message: (error as Error).message }
  } finally {
    clearTimeout(timer)
    if (escalate) clearTimeout(escalate)
    // A killed hook's group may still hold stragglers that ignored SIGTERM: end them with it.
    if (killed) signalGroup(subprocess.pid, 'SIGKILL')
    options.signal?.removeEventListener('abort', kill)
    running.delete(kill)
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}
