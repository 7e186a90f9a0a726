import type { JsonValue, ToolExec, ToolExecutionResult } from '@cordage/core'
import type { PostDecision, PreDecision } from '@cordage/registry'
import { redactAt } from './pointer.js'
import { POST_ACTIONS, PRE_ACTIONS, type Rule } from './rules.js'
import { errorMessage } from '@cordage/core'

/** The first matching pre-execution rule, or the failure that denies the call (policy fails closed). */
export type PreVerdict = { rule: Rule } | { error: string } | undefined

const label = (rule: Rule) => {
  const { action, tool, path } = rule.config
  return `policy rule ${rule.index} (${[action, tool, path !== undefined && `path ${path}`].filter(Boolean).join(' ')})`
}
const failedMessage = (rule: Rule, error: unknown) => `${label(rule)} failed, so the call was denied: ${errorMessage(error)}`

/** Evaluates pre rules in order; the first match wins. A rule that throws yields an error verdict. */
export function firstPreMatch(rules: readonly Rule[], exec: ToolExec): PreVerdict {
  for (const rule of rules) {
    if (!(PRE_ACTIONS as readonly string[]).includes(rule.action)) continue
    try {
      if (rule.matches(exec)) return { rule }
    } catch (error) {
      return { error: failedMessage(rule, error) }
    }
  }
}

/** Why a matching `deny` or `ask` rule stops a call: its reason, or the rule named. */
export function denialOf(rule: Rule): string {
  if (rule.action === 'ask') return rule.config.reason ?? `${label(rule)} asks for approval`
  return rule.config.reason ?? `denied by ${label(rule)}`
}

/**
 * `firstPreMatch` remembered for the last call: the pre-execute listener and the guard judge the same call
 * one after the other, before its body can add anything to its paths.
 */
export function lastVerdict(rules: readonly Rule[]): (exec: ToolExec) => PreVerdict {
  let lastExec: ToolExec | undefined
  let last: PreVerdict
  return (exec) => {
    if (exec !== lastExec) {
      last = firstPreMatch(rules, exec)
      lastExec = exec
    }
    return last
  }
}

/** The guard behind `deny`: monotonic, so no later listener can re-allow the call. */
export function createGuard(rules: readonly Rule[], judge = lastVerdict(rules)) {
  return (exec: ToolExec): string | undefined => {
    const verdict = judge(exec)
    if (!verdict) return undefined
    if ('error' in verdict) return verdict.error
    if (verdict.rule.action === 'deny') return denialOf(verdict.rule)
  }
}

/** The `tools/pre-execute` listener behind `ask` (and an early `deny`); never overrides an inner deny. */
export function createPreListener(rules: readonly Rule[], judge = lastVerdict(rules)) {
  return async (exec: ToolExec, next: () => Promise<PreDecision>): Promise<PreDecision> => {
    const verdict = judge(exec)
    if (verdict && 'error' in verdict) return { kind: 'deny', reason: verdict.error }
    if (verdict?.rule.action === 'deny') return { kind: 'deny', reason: denialOf(verdict.rule) }
    const inner = await next()
    if (verdict?.rule.action !== 'ask' || inner?.kind === 'deny') return inner
    return { kind: 'ask', reason: denialOf(verdict.rule) }
  }
}

/**
 * The `tools/post-execute` listener: delegates first, then applies every matching post rule on top of
 * what inner listeners decided. A block wins; redactions accumulate into one value replacement (which the
 * registry revalidates and re-renders); replace-content swaps presentation only. Errors block.
 */
export function createPostListener(rules: readonly Rule[]) {
  const postRules = rules.filter((rule) => (POST_ACTIONS as readonly string[]).includes(rule.action))
  return async (exec: ToolExec, result: ToolExecutionResult, next: () => Promise<PostDecision>): Promise<PostDecision> => {
    const inner = await next()
    const matched: Rule[] = []
    for (const rule of postRules) {
      try {
        if (rule.matches(exec)) matched.push(rule)
      } catch (error) {
        return block(inner, `${label(rule)} failed, so the result was withheld: ${errorMessage(error)}`)
      }
    }
    if (matched.length === 0) return inner
    const blocking = matched.find((rule) => rule.action === 'block')
    if (blocking) return block(inner, blocking.config.feedback!)
    if (inner?.kind === 'block') return inner
    const redactions = matched.filter((rule) => rule.action === 'redact-value')
    const replacement = matched.find((rule) => rule.action === 'replace-content')
    const innerValue = inner?.kind === 'accept' ? inner.value : undefined
    let value: JsonValue | undefined
    if (redactions.length && !result.isError) {
      try {
        value = redact(innerValue ?? result.value, redactions)
      } catch (error) {
        return block(inner, `policy redaction failed, so the result was withheld: ${errorMessage(error)}`)
      }
    }
    if (replacement && (value !== undefined || innerValue !== undefined)) {
      return block(inner, `${label(replacement)} cannot replace the content of a result whose value is also replaced; the result was withheld`)
    }
    // A new value is re-rendered: it would bring back what an inner listener's content replacement hid.
    if (value !== undefined && inner?.kind === 'accept' && inner.content !== undefined) {
      return block(inner, `${label(redactions[0]!)} cannot redact a result whose content another listener replaced; the result was withheld`)
    }
    const contexts = inner?.additionalContexts ? { additionalContexts: inner.additionalContexts } : {}
    if (value !== undefined) return { kind: 'accept', value, ...contexts }
    if (replacement) return { kind: 'accept', content: [{ type: 'text', text: replacement.config.content! }], ...contexts }
    return inner
  }
}

/** Applies every redaction to one mutable copy; `undefined` when nothing was there to redact. */
function redact(value: JsonValue, rules: readonly Rule[]): JsonValue | undefined {
  const copy = structuredClone(value) as JsonValue
  let changed = 0
  for (const rule of rules) {
    for (const pointer of rule.pointers) changed += redactAt(copy, pointer, rule.config.replacement)
  }
  return changed ? copy : undefined
}

function block(inner: PostDecision | undefined, feedback: string): PostDecision {
  return { kind: 'block', feedback, ...(inner?.additionalContexts && { additionalContexts: inner.additionalContexts }) }
}
