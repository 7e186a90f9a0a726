import type { ContentBlock } from '@cordage/core'
import type { HookOutcome } from './run.js'

/** What one PreToolUse hook said. */
export type PreVote = { kind: 'none'; context?: string } | { kind: 'deny' | 'ask'; reason: string; context?: string } | { kind: 'failed'; message: string }

/** What one PostToolUse hook said. */
export type PostVote =
  { kind: 'none'; context?: string; content?: ContentBlock[] } | { kind: 'block'; feedback: string; context?: string } | { kind: 'failed'; message: string }

type HookJson = {
  continue?: unknown
  stopReason?: unknown
  decision?: unknown
  reason?: unknown
  systemMessage?: unknown
  hookSpecificOutput?: {
    permissionDecision?: unknown
    permissionDecisionReason?: unknown
    additionalContext?: unknown
    updatedInput?: unknown
    updatedToolOutput?: unknown
    updatedMCPToolOutput?: unknown
  }
}

/** The most characters of hook output one reason, feedback or context carries to the model. */
export const MAX_HOOK_TEXT = 10_000

/** `text` cut at `MAX_HOOK_TEXT`, saying how much was left out: a hook's output is not the model's to page through. */
export function bounded(text: string): string {
  if (text.length <= MAX_HOOK_TEXT) return text
  return `${text.slice(0, MAX_HOOK_TEXT)}\n… [hook output truncated: ${text.length - MAX_HOOK_TEXT} more characters]`
}

const str = (value: unknown) => (typeof value === 'string' && value.trim() ? bounded(value) : undefined)

/**
 * Parses exit-0 stdout as a JSON decision; plain text (or nothing) is no decision. Stdout that starts
 * like JSON but does not parse is a failed hook (a decision that could not be read), not "no objection".
 */
function parseJson(stdout: string, command: string): HookJson | { failed: string } | undefined {
  const trimmed = stdout.trim()
  if (!trimmed.startsWith('{')) return undefined
  try {
    const parsed = JSON.parse(trimmed)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : undefined
  } catch (error) {
    return { failed: `hook "${command}" printed JSON that does not parse (${(error as Error).message})` }
  }
}

const PERMISSION_DECISIONS = [undefined, 'allow', 'deny', 'ask']

/** Exit 2 or a non-zero / timed-out / crashed hook, common to both events. */
function failureOf(outcome: HookOutcome, command: string): { blocked?: string; failed?: string } | undefined {
  if (outcome.kind === 'timeout') return { failed: `hook "${command}" timed out after ${outcome.timeoutMs / 1000} s` }
  if (outcome.kind === 'error') return { failed: `hook "${command}" failed to run: ${outcome.message}` }
  if (outcome.code === 2) return { blocked: bounded(outcome.stderr.trim()) || `hook "${command}" blocked the call (exit code 2)` }
  if (outcome.code !== 0)
    return { failed: `hook "${command}" exited with code ${outcome.code}${outcome.stderr.trim() ? `: ${bounded(outcome.stderr.trim())}` : ''}` }
}

/** Interprets a PreToolUse outcome (Claude Code semantics: exit 2 blocks, JSON decides). */
export function preVote(outcome: HookOutcome, command: string): PreVote {
  const failure = failureOf(outcome, command)
  if (failure?.blocked !== undefined) return { kind: 'deny', reason: failure.blocked }
  if (failure?.failed !== undefined) return { kind: 'failed', message: failure.failed }
  const json = outcome.kind === 'exit' ? parseJson(outcome.stdout, command) : undefined
  if (!json) return { kind: 'none' }
  if ('failed' in json) return { kind: 'failed', message: json.failed }
  const specific = json.hookSpecificOutput ?? {}
  const context = str(specific.additionalContext)
  // A decision this plugin cannot read ("Deny", "block") is a failed hook: `preToolUseFailure` decides, not a default.
  if (!PERMISSION_DECISIONS.includes(specific.permissionDecision as string | undefined))
    return {
      kind: 'failed',
      message: `hook "${command}" answered permissionDecision ${JSON.stringify(specific.permissionDecision)}, which is not allow, deny or ask`,
    }
  if (json.continue === false) return { kind: 'deny', reason: str(json.stopReason) ?? `hook "${command}" stopped the run`, context }
  // Cordage arguments are immutable: honouring a rewrite is impossible, so the call is refused.
  if (specific.updatedInput !== undefined)
    return { kind: 'deny', reason: `hook "${command}" asked to rewrite the tool input (updatedInput), which is not supported; the call was not run`, context }
  const decision = specific.permissionDecision ?? (json.decision === 'block' ? 'deny' : undefined)
  const reason = str(specific.permissionDecisionReason) ?? str(json.reason)
  if (decision === 'deny') return { kind: 'deny', reason: reason ?? `denied by hook "${command}"`, context }
  if (decision === 'ask') return { kind: 'ask', reason: reason ?? `hook "${command}" asks for approval`, context }
  return { kind: 'none', context }
}

/** A content replacement from `updatedToolOutput` / `updatedMCPToolOutput`: a string, blocks, or `{ content }`. */
function replacementOf(value: unknown): ContentBlock[] | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'string') return [{ type: 'text', text: value }]
  if (Array.isArray(value)) return value as ContentBlock[]
  if (value && typeof value === 'object' && Array.isArray((value as { content?: unknown }).content)) return (value as { content: ContentBlock[] }).content
  return [{ type: 'text', text: JSON.stringify(value) }]
}

/** Interprets a PostToolUse outcome: exit 2 or `decision: "block"` blocks; JSON may add context or replace the output. */
export function postVote(outcome: HookOutcome, command: string): PostVote {
  const failure = failureOf(outcome, command)
  if (failure?.blocked !== undefined) return { kind: 'block', feedback: failure.blocked }
  if (failure?.failed !== undefined) return { kind: 'failed', message: failure.failed }
  const json = outcome.kind === 'exit' ? parseJson(outcome.stdout, command) : undefined
  if (!json) return { kind: 'none' }
  if ('failed' in json) return { kind: 'failed', message: json.failed }
  const specific = json.hookSpecificOutput ?? {}
  const context = str(specific.additionalContext)
  if (json.continue === false) return { kind: 'block', feedback: str(json.stopReason) ?? `hook "${command}" stopped the run`, context }
  if (json.decision === 'block') return { kind: 'block', feedback: str(json.reason) ?? `blocked by hook "${command}"`, context }
  const content = replacementOf(specific.updatedToolOutput ?? specific.updatedMCPToolOutput)
  return { kind: 'none', context, ...(content && { content }) }
}
