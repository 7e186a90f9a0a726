import Schema from 'schemastery'
import { defineTool, type ContentBlock, type ToolDefinition } from '@cordage/core'
import type { JobsService, SpillService } from '@cordage/services'
import { startBackground } from './background.js'
import { resolveCwd } from './cwd.js'
import { runForeground, type ForegroundValue } from './foreground.js'
import type { StreamFile } from './record.js'
import type { RunningCommand } from './run.js'

/** Everything the `bash` tool needs from the plugin. */
export interface BashToolOptions {
  root: string
  shell: string
  defaultTimeoutMs: number
  maxTimeoutMs: number
  maxOutputBytes: number
  maxSpillBytes: number
  killGraceMs: number
  env: () => Record<string, string>
  jobs: () => JobsService | undefined
  spill: () => SpillService | undefined
  warn(message: string): void
  running: Set<RunningCommand>
}

const nullable = <S extends Schema>(schema: S) => Schema.union([schema, Schema.const(null)]).required()

const StreamFile = Schema.object({
  path: nullable(Schema.string()).description('The file holding the whole stream, or null when none could be kept.'),
  bytes: Schema.natural().required(),
  note: nullable(Schema.string()).description('Why there is no file, or why it stops short of the stream.'),
})

const Foreground = Schema.object({
  kind: Schema.const('foreground' as const).required(),
  exitCode: nullable(Schema.number()),
  signal: nullable(Schema.string()),
  stdout: Schema.string().required(),
  stderr: Schema.string().required(),
  durationMs: Schema.natural().required(),
  timedOut: Schema.boolean().required(),
  omittedBytes: Schema.object({ stdout: Schema.natural().required(), stderr: Schema.natural().required() }).required(),
  fullOutput: Schema.object({ stdout: nullable(StreamFile), stderr: nullable(StreamFile) }).required(),
})

const Background = Schema.object({
  kind: Schema.const('background' as const).required(),
  jobId: Schema.string().required(),
})

function parameters(options: BashToolOptions) {
  return Schema.object({
    command: Schema.string().min(1).required().description('The command, run with `bash -c`.'),
    timeout_ms: Schema.natural()
      .min(1)
      .max(options.maxTimeoutMs)
      .default(options.defaultTimeoutMs)
      .description(
        `Kill the command (and everything it started) after this long. Default ${options.defaultTimeoutMs}, at most ${options.maxTimeoutMs}. Foreground only.`,
      ),
    run_in_background: Schema.boolean()
      .default(false)
      .description('Start it as a background job and return its job id at once; read it with job_output, stop it with job_kill.'),
    cwd: Schema.string().description('Working directory, relative to the workspace root (default: the root).'),
  })
}

/** Where a stream that overflowed the value went in full, as one bracketed line. */
function fileLine(stream: 'stdout' | 'stderr', omitted: number, file: StreamFile | null): string | undefined {
  if (!file) return undefined
  if (!file.path) return `[${omitted} bytes of ${stream} left out; the whole ${stream} was ${file.note ?? 'not kept'}]`
  return `[${omitted} bytes of ${stream} left out; whole ${stream}${file.note ? ` (${file.note})` : ''}: ${file.path} (read it with read offset/limit or grep)]`
}

/** Terminal-like text: stdout, then `[stderr]` and stderr, then a status line unless the command exited 0. */
export function renderForeground(timeoutMs: number, value: ForegroundValue): ContentBlock[] {
  const parts: string[] = []
  if (value.stdout) parts.push(value.stdout.replace(/\n$/, ''))
  const stdoutFile = fileLine('stdout', value.omittedBytes.stdout, value.fullOutput.stdout)
  if (stdoutFile) parts.push(stdoutFile)
  if (value.stderr) parts.push('[stderr]', value.stderr.replace(/\n$/, ''))
  const stderrFile = fileLine('stderr', value.omittedBytes.stderr, value.fullOutput.stderr)
  if (stderrFile) parts.push(stderrFile)
  if (value.timedOut) parts.push(`Timed out after ${timeoutMs} ms; the command and its children were killed${value.signal ? ` (${value.signal})` : ''}`)
  else if (value.signal) parts.push(`Terminated by signal ${value.signal}`)
  else if (value.exitCode !== 0) parts.push(`Exit code ${value.exitCode ?? 'unknown'}`)
  return [{ type: 'text', text: parts.length ? parts.join('\n') : '(no output)' }]
}

/** The `bash` tool. */
export function bashTool(options: BashToolOptions): ToolDefinition {
  return defineTool({
    name: 'bash',
    description: `Run a shell command in the workspace (${options.root}) and return its exit code, stdout and stderr. A non-zero exit is a normal result. Output is kept up to ${options.maxOutputBytes} bytes per stream (head and tail); a longer stream is saved whole to a file whose path the result names. The command has no stdin. Long-running work (servers, watchers) belongs in run_in_background.`,
    parameters: parameters(options),
    output: {
      schema: Schema.union([Foreground, Background]),
      render: (args, value) => {
        if (value.kind === 'foreground') return renderForeground(args.timeout_ms, value as ForegroundValue)
        return [
          {
            type: 'text',
            text: `Started in the background as ${value.jobId}: ${args.command}\nRead its output with job_output { "job_id": "${value.jobId}" } (add "wait_ms" to wait for more); stop it with job_kill.`,
          },
        ]
      },
    },
    // Commands can change the workspace and each other's inputs: never run two at once.
    concurrency: 'exclusive',
    async execute(args, exec) {
      const cwd = await resolveCwd(options.root, args.cwd)
      const common = { shell: options.shell, command: args.command, cwd, env: options.env(), killGraceMs: options.killGraceMs }
      if (args.run_in_background) return startBackground({ ...common, jobs: options.jobs(), agent: exec.agent })
      return runForeground({
        ...common,
        timeoutMs: args.timeout_ms,
        maxOutputBytes: options.maxOutputBytes,
        maxSpillBytes: options.maxSpillBytes,
        spill: options.spill(),
        callId: exec.callId,
        warn: options.warn,
        signal: exec.signal,
        running: options.running,
      })
    },
  })
}
