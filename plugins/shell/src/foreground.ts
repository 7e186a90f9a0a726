import { ByteCapture } from '@cordage/process'
import { ShellSpawnError } from './errors.js'
import { spawnCommand, type RunningCommand } from './run.js'

/** The canonical value of a foreground run. */
export interface ForegroundValue {
  kind: 'foreground'
  exitCode: number | null
  signal: string | null
  stdout: string
  stderr: string
  durationMs: number
  timedOut: boolean
  omittedBytes: { stdout: number; stderr: number }
}

/** What a foreground run needs. */
export interface ForegroundOptions {
  shell: string
  command: string
  cwd: string
  env: Record<string, string>
  timeoutMs: number
  killGraceMs: number
  maxOutputBytes: number
  signal: AbortSignal
  /** Commands in flight, so unloading the plugin can kill them. */
  running: Set<RunningCommand>
}

/**
 * Runs a command to completion with bounded capture (a third of the budget for the head, the rest for
 * the tail, per stream). The deadline and the abort signal kill the whole process tree; the promise
 * settles only once it is dead.
 */
export async function runForeground(options: ForegroundOptions): Promise<ForegroundValue> {
  const started = Date.now()
  const headBytes = Math.floor(options.maxOutputBytes / 3)
  const stdout = new ByteCapture(headBytes, options.maxOutputBytes - headBytes)
  const stderr = new ByteCapture(headBytes, options.maxOutputBytes - headBytes)
  const command = spawnCommand({ ...options, onStdout: (chunk) => stdout.push(chunk), onStderr: (chunk) => stderr.push(chunk) })
  options.running.add(command)
  let timedOut = false
  const timer = setTimeout(() => {
    if (!command.isRunning()) return
    timedOut = true
    void command.stop()
  }, options.timeoutMs)
  const onAbort = () => void command.stop()
  options.signal.addEventListener('abort', onAbort, { once: true })
  if (options.signal.aborted) onAbort()
  let outcome
  try {
    outcome = await command.done
  } finally {
    clearTimeout(timer)
    options.signal.removeEventListener('abort', onAbort)
    options.running.delete(command)
  }
  if (outcome.spawnError) throw new ShellSpawnError(outcome.spawnError)
  const out = stdout.text()
  const err = stderr.text()
  return {
    kind: 'foreground',
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    stdout: out.text,
    stderr: err.text,
    durationMs: Date.now() - started,
    timedOut,
    omittedBytes: { stdout: out.omitted, stderr: err.omitted },
  }
}
