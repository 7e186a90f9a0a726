import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { strictConfig, errorMessage } from '@cordage/core'
import { createGuard, createPostListener, createPreListener, lastVerdict } from './enforce.js'
import { PolicyConfigError } from './errors.js'
import { RuleNamedFiles } from './identity.js'
import { createOpenedListener } from './opened.js'
import { CallPathResolver } from './paths.js'
import { compileRules, POST_ACTIONS, PRE_ACTIONS, type RuleConfig } from './rules.js'

export const name = 'policy'
export const inject = ['tools']

/** Declarative rules; see the README for their meaning and evaluation order. */
export interface Config {
  rules: RuleConfig[]
  root?: string
}

const Predicate = Schema.object({
  pointer: Schema.string().required().description('JSON pointer into the call arguments; `*` matches every key or index.'),
  equals: Schema.any().description('Matches when the value is this JSON value (key order ignored).'),
  glob: Schema.string().description('Matches a string value against a glob.'),
  regex: Schema.string().description('Matches a string value against a JavaScript regular expression (unanchored).'),
})

const Rule = Schema.object({
  tool: Schema.string().description('Tool-name glob (default `*` when `path` is given).'),
  path: Schema.string().description(
    'Resource rule: a glob over the canonical real path of every path argument a tool declares, relative to `root` (or absolute).',
  ),
  access: Schema.union(['read', 'write'] as const).description('With `path`: only paths the tool reads (`read`, writes included) or writes (`write`).'),
  when: Schema.array(Predicate).description('Argument predicates; all must match.'),
  action: Schema.union([...PRE_ACTIONS, ...POST_ACTIONS]).required(),
  reason: Schema.string().description('deny / ask: the reason given.'),
  feedback: Schema.string().description('block: what the model sees instead of the result.'),
  pointers: Schema.array(Schema.string()).description('redact-value: JSON pointers into the value.'),
  replacement: Schema.any().description('redact-value: write this instead of removing.'),
  content: Schema.string().description('replace-content: the text the model sees (presentation only).'),
  direct: Schema.boolean().description('Apply to direct calls only (nested Code Mode calls are exempt).'),
})

export const Config: Schema<Partial<Config>, Config> = strictConfig(
  name,
  Schema.object({
    rules: Schema.array(Rule).default([]).description('Evaluated in order; see the README.'),
    root: Schema.string().description('Directory relative `path` globs and relative path arguments resolve against (default: the working directory at load).'),
  }),
)

/** Checks every rule at load, then enforces them: deny as a guard, ask before execution, post actions after. */
export function apply(ctx: Context, config: Config): void {
  const tools = ctx.tools
  const root = realRoot(config.root)
  // `ctx.tools.get` is the registry's own method (a map lookup), so definitions are read per call.
  const resolver = new CallPathResolver(root, (name) => tools.get(name))
  const rules = compileRules(config.rules, resolver.resolve)
  if (rules.length === 0) return
  if (rules.some((rule) => rule.config.path !== undefined)) {
    resolver.named = new RuleNamedFiles(root, rules)
    ctx.effect(() => () => resolver.cache.close(), 'policy path cache')
    ctx.on('paths/opened', createOpenedListener(rules, resolver, root))
  }
  if (rules.some((rule) => (PRE_ACTIONS as readonly string[]).includes(rule.action))) {
    const judge = lastVerdict(rules)
    tools.guard(createGuard(rules, judge))
    ctx.on('tools/pre-execute', createPreListener(rules, judge), true)
  }
  if (rules.some((rule) => (POST_ACTIONS as readonly string[]).includes(rule.action))) {
    ctx.on('tools/post-execute', createPostListener(rules), true)
  }
}

function realRoot(root: string | undefined): string {
  try {
    return realpathSync(resolve(root ?? process.cwd()))
  } catch (error) {
    throw new PolicyConfigError(`policy: root: ${JSON.stringify(root ?? process.cwd())} cannot be resolved: ${errorMessage(error)}`)
  }
}

export type { RuleConfig, PredicateConfig, PreAction, PostAction } from './rules.js'
export { PolicyConfigError } from './errors.js'

/** The plugin object, for loaders that import the default export. */
export default { name, inject, Config, apply }
