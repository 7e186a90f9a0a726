import type { Context } from 'cordis'
import Schema from 'schemastery'
import { createGuard, createPostListener, createPreListener } from './enforce.js'
import { compileRules, POST_ACTIONS, PRE_ACTIONS, type RuleConfig } from './rules.js'

export const name = 'policy'
export const inject = ['tools']

/** Declarative rules; see the README for their meaning and evaluation order. */
export interface Config {
  rules: RuleConfig[]
}

const Predicate = Schema.object({
  pointer: Schema.string().required().description('JSON pointer into the call arguments; `*` matches every key or index.'),
  equals: Schema.any().description('Matches when the value is this JSON value (key order ignored).'),
  glob: Schema.string().description('Matches a string value against a glob.'),
  regex: Schema.string().description('Matches a string value against a JavaScript regular expression (unanchored).'),
})

const Rule = Schema.object({
  tool: Schema.string().required().description('Tool-name glob.'),
  when: Schema.array(Predicate).description('Argument predicates; all must match.'),
  action: Schema.union([...PRE_ACTIONS, ...POST_ACTIONS]).required(),
  reason: Schema.string().description('deny / ask: the reason given.'),
  feedback: Schema.string().description('block: what the model sees instead of the result.'),
  pointers: Schema.array(Schema.string()).description('redact-value: JSON pointers into the value.'),
  replacement: Schema.any().description('redact-value: write this instead of removing.'),
  content: Schema.string().description('replace-content: the text the model sees (presentation only).'),
  direct: Schema.boolean().description('Apply to direct calls only (nested Code Mode calls are exempt).'),
})

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  rules: Schema.array(Rule).default([]).description('Evaluated in order; see the README.'),
})

/** Checks every rule at load, then enforces them: deny as a guard, ask before execution, post actions after. */
export function apply(ctx: Context, config: Config): void {
  const rules = compileRules(config.rules)
  if (rules.length === 0) return
  if (rules.some((rule) => (PRE_ACTIONS as readonly string[]).includes(rule.action))) {
    ctx.tools.guard(createGuard(rules))
    ctx.on('tools/pre-execute', createPreListener(rules), true)
  }
  if (rules.some((rule) => (POST_ACTIONS as readonly string[]).includes(rule.action))) {
    ctx.on('tools/post-execute', createPostListener(rules), true)
  }
}

export { compileRules, PRE_ACTIONS, POST_ACTIONS } from './rules.js'
export type { Rule, RuleConfig, PredicateConfig, PreAction, PostAction } from './rules.js'
export { createGuard, createPreListener, createPostListener, firstPreMatch } from './enforce.js'
export { globToRegExp } from './glob.js'
export { parsePointer, resolveAll, redactAt } from './pointer.js'
export type { Pointer } from './pointer.js'
export { PolicyConfigError } from './errors.js'

/** The plugin object, for loaders that import the default export. */
export default { name, inject, Config, apply }
