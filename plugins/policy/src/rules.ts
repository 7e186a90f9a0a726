import type { JsonValue, ToolExec } from '@cordage/core'
import { PolicyConfigError } from './errors.js'
import { globToRegExp } from './glob.js'
import { compilePathGlob, pathCallMatcher, type PathGlob } from './path-match.js'
import type { Access, CallPath } from './paths.js'
import { parsePointer, resolveAll, type Pointer } from './pointer.js'
import { errorMessage } from '@cordage/core'

export const PRE_ACTIONS = ['allow', 'deny', 'ask'] as const
export const POST_ACTIONS = ['block', 'redact-value', 'replace-content'] as const
export type PreAction = (typeof PRE_ACTIONS)[number]
export type PostAction = (typeof POST_ACTIONS)[number]

/** An argument predicate: the value at `pointer` equals, matches the glob or matches the regex. */
export interface PredicateConfig {
  pointer: string
  equals?: JsonValue
  glob?: string
  regex?: string
}

/** One rule as written in config: `tool` and/or `path` (a resource rule) select the calls. */
export interface RuleConfig {
  tool?: string
  path?: string
  access?: Access
  when?: PredicateConfig[]
  action: PreAction | PostAction
  reason?: string
  feedback?: string
  pointers?: string[]
  replacement?: JsonValue
  content?: string
  direct?: boolean
}

/** A checked rule: `matches` answers for one call (it may throw; callers fail closed). */
export interface Rule {
  index: number
  action: PreAction | PostAction
  config: RuleConfig
  pointers: Pointer[]
  matches(exec: ToolExec): boolean
}

const FIELDS_BY_ACTION: Record<string, string[]> = {
  allow: [],
  deny: ['reason'],
  ask: ['reason'],
  block: ['feedback'],
  'redact-value': ['pointers', 'replacement'],
  'replace-content': ['content'],
}
const REQUIRED_BY_ACTION: Record<string, string | undefined> = { block: 'feedback', 'redact-value': 'pointers', 'replace-content': 'content' }
const OPTIONAL_FIELDS = ['reason', 'feedback', 'pointers', 'replacement', 'content'] as const

/** The real paths a call declares; needed by rules with `path`. Throws when a path cannot be resolved. */
export type PathResolver = (exec: ToolExec) => CallPath[]

/** Checks and compiles every rule; the first problem throws `PolicyConfigError` naming `rules[i].field`. */
export function compileRules(rules: readonly RuleConfig[], resolvePaths?: PathResolver): Rule[] {
  return rules.map((rule, index) => compileRule(rule, index, resolvePaths))
}

function compileRule(rule: RuleConfig, index: number, resolvePaths: PathResolver | undefined): Rule {
  const fail = (field: string, message: string): never => {
    throw new PolicyConfigError(`policy: rules[${index}].${field}: ${message}`)
  }
  if (!rule || typeof rule !== 'object') fail('', 'a rule must be an object')
  if (rule.tool === undefined && rule.path === undefined) fail('tool', 'a tool-name glob or a path glob is required (use tool: "*" for every tool)')
  if (rule.tool !== undefined && (typeof rule.tool !== 'string' || rule.tool === ''))
    fail('tool', 'must be a non-empty tool-name glob (use "*" for every tool)')
  const tool = rule.tool ?? '*'
  let toolPattern: RegExp | undefined
  try {
    toolPattern = globToRegExp(tool)
  } catch (error) {
    fail('tool', `bad glob "${tool}": ${errorMessage(error)}`)
  }
  const matchesPaths = compilePathRule(rule, resolvePaths, fail)
  if (![...PRE_ACTIONS, ...POST_ACTIONS].includes(rule.action as PreAction)) {
    fail('action', `"${rule.action}" is not one of ${[...PRE_ACTIONS, ...POST_ACTIONS].join(', ')}`)
  }
  // Schemastery turns an absent array into [], so an empty array counts as absent.
  const present = (field: keyof RuleConfig) => rule[field] !== undefined && !(Array.isArray(rule[field]) && rule[field].length === 0)
  for (const field of OPTIONAL_FIELDS) {
    if (present(field) && !FIELDS_BY_ACTION[rule.action]!.includes(field)) fail(field, `does not apply to action "${rule.action}"`)
  }
  const required = REQUIRED_BY_ACTION[rule.action]
  if (required && rule[required as keyof RuleConfig] === undefined) fail(required, `is required for action "${rule.action}"`)
  if (rule.action === 'block' && typeof rule.feedback !== 'string') fail('feedback', 'must be a string')
  if (rule.action === 'replace-content' && typeof rule.content !== 'string') fail('content', 'must be a string')
  const pointers: Pointer[] = []
  if (rule.action === 'redact-value') {
    if (!Array.isArray(rule.pointers) || rule.pointers.length === 0) fail('pointers', 'must list at least one JSON pointer')
    rule.pointers!.forEach((pointer, i) => {
      try {
        const parsed = parsePointer(pointer)
        if (parsed.length === 0) throw new Error('the root ("") cannot be redacted; block the call instead')
        pointers.push(parsed)
      } catch (error) {
        fail(`pointers[${i}]`, `bad JSON pointer: ${errorMessage(error)}`)
      }
    })
  }
  const predicates = (rule.when ?? []).map((predicate, i) => compilePredicate(predicate, (field, message) => fail(`when[${i}]${field}`, message)))
  const direct = rule.direct === true
  return {
    index,
    action: rule.action,
    config: rule,
    pointers,
    matches: (exec) =>
      (!direct || exec.parent === undefined) &&
      toolPattern!.test(exec.name) &&
      predicates.every((test) => test(exec.arguments)) &&
      (!matchesPaths || matchesPaths(exec)),
  }
}

function compilePathRule(rule: RuleConfig, resolvePaths: PathResolver | undefined, fail: (field: string, message: string) => never) {
  if (rule.path === undefined) {
    if (rule.access !== undefined) fail('access', 'only applies to a rule with a path')
    return undefined
  }
  if (typeof rule.path !== 'string' || rule.path === '') fail('path', 'must be a non-empty glob (relative to the policy root, or absolute)')
  if (rule.access !== undefined && rule.access !== 'read' && rule.access !== 'write') fail('access', `"${rule.access}" is not one of read, write`)
  if (!resolvePaths) fail('path', 'path rules need the policy root (load the plugin, or pass a path resolver)')
  let glob: PathGlob | undefined
  try {
    glob = compilePathGlob(rule.path!)
  } catch (error) {
    fail('path', `bad glob "${rule.path}": ${errorMessage(error)}`)
  }
  return pathCallMatcher(glob!, rule.access, rule.action === 'allow', resolvePaths!)
}

function compilePredicate(predicate: PredicateConfig, fail: (field: string, message: string) => never): (args: JsonValue) => boolean {
  if (!predicate || typeof predicate !== 'object') fail('', 'a predicate must be an object')
  let pointer: Pointer = []
  try {
    pointer = parsePointer(predicate.pointer)
  } catch (error) {
    fail('.pointer', typeof predicate.pointer === 'string' ? `bad JSON pointer: ${errorMessage(error)}` : 'a JSON pointer string is required')
  }
  const kinds = (['equals', 'glob', 'regex'] as const).filter((kind) => predicate[kind] !== undefined)
  if (kinds.length !== 1) fail('', `needs exactly one of equals, glob or regex (got ${kinds.length ? kinds.join(', ') : 'none'})`)
  let test: (value: JsonValue) => boolean
  if (kinds[0] === 'equals') {
    const expected = JSON.stringify(canonical(predicate.equals!))
    test = (value) => JSON.stringify(canonical(value)) === expected
  } else {
    let pattern: RegExp | undefined
    try {
      pattern = kinds[0] === 'glob' ? globToRegExp(predicate.glob!) : new RegExp(predicate.regex!)
    } catch (error) {
      fail(`.${kinds[0]}`, `bad ${kinds[0] === 'glob' ? 'glob' : 'regular expression'}: ${errorMessage(error)}`)
    }
    test = (value) => typeof value === 'string' && pattern!.test(value)
  }
  return (args) => resolveAll(args, pointer).some(test)
}

/** A copy with object keys sorted, so `equals` ignores key order. */
function canonical(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical(value[key]!)]),
    )
  }
  return value
}
