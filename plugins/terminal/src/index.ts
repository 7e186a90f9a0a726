import type { Context } from 'cordis'
import Schema from 'schemastery'
import { envPolicySchema, strictConfig, type EnvPolicy, type ConfigInput } from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { AgentNotice, JobsService } from '@cordage/services'
import { terminalCloseTool } from './close.js'
import { workspaceRoot } from './cwd.js'
import { sessionEnv } from './env.js'
import { terminalListTool } from './list.js'
import { terminalOpenTool } from './open.js'
import { assertLimits } from './options.js'
import { loadPty } from './pty.js'
import { terminalReadTool } from './read.js'
import { terminalSendTool } from './send.js'
import { SessionTable, killOnExit } from './sessions.js'
import { terminalSignalTool } from './signal.js'
import { assertShell } from './which.js'

export const name = 'terminal'
export const inject = ['tools']

/** Terminal plugin configuration (see the README for the defaults and their reasons). */
export interface Config {
  root?: string
  shell: string
  shellArgs: string[]
  cols: number
  rows: number
  maxCols: number
  maxRows: number
  scrollback: number
  maxSessions: number
  idleTimeoutMs: number
  settleMs: number
  openWaitMs: number
  defaultWaitMs: number
  maxWaitMs: number
  maxReadLines: number
  maxReadBytes: number
  killGraceMs: number
  env: EnvPolicy
}

export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    root: Schema.string().description('Workspace root; `cwd` must stay inside it. Default: process.cwd() at load.'),
    shell: Schema.string().default('bash').description('Shell for sessions without a command, and for `<shell> -c <command>`.'),
    shellArgs: Schema.array(Schema.string()).default(['--noprofile', '--norc', '-i']).description('Arguments of the default interactive shell.'),
    cols: Schema.natural().min(20).default(120).description('Default columns.'),
    rows: Schema.natural().min(5).default(40).description('Default rows.'),
    maxCols: Schema.natural().min(20).max(1000).default(400),
    maxRows: Schema.natural().min(5).max(500).default(200),
    scrollback: Schema.natural().default(5_000).description('Rows kept above the screen per session.'),
    maxSessions: Schema.natural().min(1).default(8).description('Sessions open at once (exited ones count until closed).'),
    idleTimeoutMs: Schema.natural().default(1_800_000).description('Close a session no tool call has named for this long; 0 never.'),
    settleMs: Schema.natural().min(1).default(300).description('Quiet time after which a send without waitFor/waitForMs returns.'),
    openWaitMs: Schema.natural().default(2_000).description('Longest wait for the startup output to go quiet.'),
    defaultWaitMs: Schema.natural().min(1).default(10_000).description('Longest wait of a send without waitForMs.'),
    maxWaitMs: Schema.natural().min(1).default(300_000).description('Largest waitForMs a send may ask for.'),
    maxReadLines: Schema.natural().min(1).default(1_000).description('Scrollback rows in one result.'),
    maxReadBytes: Schema.natural().min(64).default(40_000).description('UTF-8 bytes of scrollback rows in one result.'),
    killGraceMs: Schema.natural().default(1_000).description('Time between SIGHUP/SIGTERM and SIGKILL when closing.'),
    env: envPolicySchema('terminal sessions'),
  }),
)

export function apply(ctx: Context, config: Config): void {
  assertLimits(name, config)
  const root = workspaceRoot(config.root)
  assertShell(config.shell, root)
  const logger = ctx.logger('terminal')
  const table = new SessionTable({
    maxSessions: config.maxSessions,
    idleTimeoutMs: config.idleTimeoutMs,
    notify: (text) => {
      const notice: AgentNotice = { source: 'terminal', text }
      ctx.emit('agent/notice', notice)
    },
    pty: loadPty(),
    log: (message) => logger.debug(message),
  })
  ctx.effect(() => () => table.closeAll(), 'terminal: close every session')
  ctx.effect(() => killOnExit(table), 'terminal: kill sessions on process exit')
  if (config.idleTimeoutMs) {
    ctx.effect(() => {
      const timer = setInterval(() => void table.sweep(), Math.min(60_000, Math.max(50, config.idleTimeoutMs / 4)))
      timer.unref()
      return () => clearInterval(timer)
    }, 'terminal: expire idle sessions')
  }
  const options = {
    ...config,
    table,
    root,
    limits: { maxLines: config.maxReadLines, maxBytes: config.maxReadBytes },
    env: sessionEnv(config.env),
    jobs: () => ctx.get('jobs') as JobsService | undefined,
  }
  const tools: ToolRegistry = ctx.tools
  for (const tool of [terminalOpenTool, terminalSendTool, terminalReadTool, terminalSignalTool, terminalCloseTool, terminalListTool])
    tools.register(tool(options))
}

export default { name, inject, Config, apply }

// Failures carry stable codes (README "Errors"); callers route on `code`, so the classes stay internal.
export type { SessionSnapshot, ViewValue, SendValue } from './schemas.js'
