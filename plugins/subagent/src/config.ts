import Schema from 'schemastery'
import { strictConfig, type ConfigInput } from '@cordage/core'
import type { AgentProfile, RunSettings } from './runs.js'

/** Plugin name. */
export const name = 'subagent'
/** Registers its tools and guard in the registry. Provides `subagents` (`SubagentService`, declared in `@cordage/services`). */
export const inject = ['tools']

/** Limits, defaults and named profiles of child runs (what the run table works with; see the README's Config table). */
export type Config = RunSettings

// `'*'` rather than an absent list: schemastery turns an absent array into `[]`, which would mean "no tools".
const ToolSubset: Schema<string[] | '*'> = Schema.union([Schema.array(Schema.string()), Schema.const('*' as const)]).default('*')

const Profile: Schema<ConfigInput<AgentProfile>, AgentProfile> = Schema.object({
  description: Schema.string().required().description('One line the parent model reads to choose this profile.'),
  system: Schema.string().description('System prompt of the child.'),
  tools: ToolSubset.description('Tool names the child may use, or "*" for everything its caller may use.'),
  maxTurns: Schema.natural().min(1).description('Model requests per child run.'),
})

const DEFAULT_SYSTEM =
  'You are a subagent: another agent delegated the task below to you. Work on it with your tools, then answer with a concise, complete report of what you found or did; the agent that started you sees only your final message.'

/** Validated at load: unknown keys and wrong types fail with INVALID_CONFIG. */
export const Config: Schema<ConfigInput<Config>, Config> = strictConfig(
  name,
  Schema.object({
    maxDepth: Schema.natural().default(3).description('Deepest nesting of subagents (1: children only; 0 forbids delegation).'),
    maxConcurrent: Schema.natural().min(1).default(4).description('Children one agent may run at once (fan-out).'),
    maxTurns: Schema.natural().min(1).default(20).description('Model requests per child run, unless its profile says otherwise.'),
    system: Schema.string().default(DEFAULT_SYSTEM).description('System prompt of children without a profile.'),
    tools: ToolSubset.description('Default tool subset of children: names, or "*" for everything their caller may use.'),
    agents: Schema.dict(Profile).default({}).description('Named agent profiles.'),
    budget: Schema.object({
      children: Schema.natural()
        .min(1)
        .default(100)
        .description('Child runs one root run may start in total, across nested subagents, workflows and programs.'),
      turns: Schema.natural().min(1).description("Model turns one root run may spend, its own and every child's (default: no limit)."),
      tokens: Schema.natural()
        .min(1)
        .description("Input plus output tokens one root run may spend, its own and every child's, as the model reports them (default: no limit)."),
    }).description('What one root run may spend across all its children.'),
    persist: Schema.boolean().default(true).description('Write a session file per child run.'),
    sessionDir: Schema.string().description('Sessions directory, relative to cwd (default .cordage/sessions).'),
    cwd: Schema.string().description('Working directory recorded in child sessions (default: process.cwd()).'),
  }),
)
