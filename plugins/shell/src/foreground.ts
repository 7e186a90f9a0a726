import type { SpillService } from '@cordage/services'
import { ShellSpawnError } from './errors.js'
import { StreamRecorder, type StreamFile } from './record.js'
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
  /** Per stream: where its whole output went once the value had to leave some out (null: nothing left out). */
  fullOutput: { stdout: StreamFile | null; stderr: StreamFile | null }
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
  /** Most bytes of each stream kept in its spill file. */
  maxSpillBytes: number
  spill: SpillService | undefined
  callId: string
  warn(message: string): void
  signal: AbortSignal
  /** Commands in flight, so unloading the plugin can kill them. */
  running: Set<RunningCommand>
}

/**
 * Runs a command to completion with bounded capture (a third of the budget for the head, the rest for
 * the tail, per stream), a stream that overflows it going whole into a spill file. The deadline and the
 * abort signal kill the whole process tree; the promise settles only once it is dead.
 */
export async function runForeground(options: ForegroundOptions): Promise<ForegroundValue> {
  const started = Date.now()
  const headBytes = Math.floor(options.maxOutputBytes / 3)
  const recorder = (stream: 'stdout' | 'stderr') =>
    new StreamRecorder({ ...options, stream, headBytes, tailBytes: options.maxOutputBytes - headBytes, toolName: 'bash' })
  const stdout = recorder('stdout')
  const stderr = recorder('stderr')
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
  const files = { stdout: (await stdout.finish()) ?? null, stderr: (await stderr.finish()) ?? null }
  if (outcome.spawnError) throw new ShellSpawnError(outcome.spawnError)
  const out = stdout.capture.text()
  const err = stderr.capture.text()
  return {
    kind: 'foreground',
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    stdout: out.text,
    stderr: err.text,
    durationMs: Date.now() - started,
    timedOut,
    omittedBytes: { stdout: out.omitted, stderr: err.omitted },
    fullOutput: files,
  }
}
