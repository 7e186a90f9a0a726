import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { envFilter, envPolicySchema, strictConfig, type EnvPolicy } from '@cordage/core'
import { createPostListener, createPreListener } from './listeners.js'
import { HookRunner } from './run.js'
import { compileHooks, readSettingsHooks, type HooksSection } from './settings.js'

export const name = 'hooks'
export const inject = ['tools']

/** Claude Code command hooks mapped onto tools/pre-execute and tools/post-execute. */
export interface Config {
  settingsFile?: string
  hooks: HooksSection
  cwd?: string
  sessionId?: string
  transcriptPath: string
  defaultTimeout: number
  preToolUseFailure: 'allow' | 'deny'
  toolNames: Record<string, string>
  env: EnvPolicy
}

/** Cordage tool names → the Claude Code names hook scripts test in `tool_name` and matchers. */
export const CLAUDE_TOOL_NAMES: Record<string, string> = {
  bash: 'Bash',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  glob: 'Glob',
  grep: 'Grep',
  web_fetch: 'WebFetch',
  web_search: 'WebSearch',
  todo_write: 'TodoWrite',
  subagent: 'Task',
  skill: 'Skill',
  ask_user_question: 'AskUserQuestion',
  exit_plan_mode: 'ExitPlanMode',
}

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    settingsFile: Schema.string().description('A Claude Code settings.json whose "hooks" section is used (resolved against cwd).'),
    hooks: Schema.dict(Schema.any()).default({}).description('Inline hooks in the settings.json "hooks" shape; run after the settings file ones.'),
    cwd: Schema.string().description('Working directory of hooks, their "cwd" field and CLAUDE_PROJECT_DIR (default: the process cwd).'),
    sessionId: Schema.string().description('The "session_id" hooks receive (default: a random UUID per load).'),
    transcriptPath: Schema.string().default('').description('The "transcript_path" hooks receive.'),
    defaultTimeout: Schema.number().min(0.001).default(60).description('Seconds a hook may run when it sets no "timeout".'),
    preToolUseFailure: Schema.union(['allow', 'deny'])
      .default('allow')
      .description('What a PreToolUse hook that crashes, times out or exits non-zero (not 2) means.'),
    toolNames: Schema.dict(Schema.string())
      .default(CLAUDE_TOOL_NAMES)
      .description('Cordage tool name → name shown to hooks as tool_name (matchers test both).'),
    env: envPolicySchema('hooks'),
  }),
)

/** Reads and checks every hook at load, then runs matching hooks around each tool call. */
export function apply(ctx: Context, config: Config): void {
  const logger = ctx.logger('hooks')
  const cwd = resolve(config.cwd ?? process.cwd())
  const sections = [
    ...(config.settingsFile ? [{ source: config.settingsFile, hooks: readSettingsHooks(resolve(cwd, config.settingsFile)) }] : []),
    { source: 'config', hooks: config.hooks },
  ]
  const hooks = compileHooks(sections, config.defaultTimeout, (message) => logger.warn(message))
  const runner = new HookRunner()
  const filter = envFilter(config.env)
  const options = {
    hooks,
    runner,
    cwd,
    tools: ctx.tools,
    env: () => filter(process.env),
    sessionId: config.sessionId ?? randomUUID(),
    transcriptPath: config.transcriptPath,
    toolNames: config.toolNames,
    preToolUseFailure: config.preToolUseFailure,
    warn: (message: string) => logger.warn(message),
  }
  if (hooks.PreToolUse.length) ctx.on('tools/pre-execute', createPreListener(options))
  if (hooks.PostToolUse.length) ctx.on('tools/post-execute', createPostListener(options))
  ctx.effect(() => () => runner.killAll(), 'hook processes')
}

export type { CommandHook, MatcherGroup, HooksSection, HookEvent } from './settings.js'
export { HooksConfigError } from './errors.js'

/** The plugin object, for loaders that import the default export. */
export default { name, inject, Config, apply }
