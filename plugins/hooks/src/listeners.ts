import { contentText, type ContentBlock, type HookContext, type ToolExec, type ToolExecutionResult, type ToolRunContext } from '@cordage/core'
import type { PostDecision, PreDecision, ToolRegistry } from '@cordage/registry'
import { postVote, preVote } from './decide.js'
import type { HookRunner } from './run.js'
import type { CompiledHook, CompiledHooks, HookEvent } from './settings.js'

/** What the listeners need besides the compiled hooks. */
export interface ListenerOptions {
  hooks: CompiledHooks
  runner: HookRunner
  tools: ToolRegistry
  cwd: string
  /** The environment hooks run with (credentials already withheld). */
  env: () => Record<string, string>
  sessionId: string
  transcriptPath: string
  toolNames: Record<string, string>
  preToolUseFailure: 'allow' | 'deny'
  warn(message: string): void
}

const SOURCE = 'hooks'

/** Runs the hooks of `event` matching the call in parallel (identical commands once), in config order. */
async function runMatching<T>(
  options: ListenerOptions,
  event: HookEvent,
  exec: ToolExec,
  extra: object,
  vote: (outcome: Awaited<ReturnType<HookRunner['run']>>, command: string) => T,
): Promise<T[]> {
  const claudeName = options.toolNames[exec.name] ?? exec.name
  const names = claudeName === exec.name ? [exec.name] : [exec.name, claudeName]
  const seen = new Set<string>()
  const matched: CompiledHook[] = options.hooks[event].filter((hook) => hook.matches(names) && !seen.has(hook.command) && seen.add(hook.command))
  if (matched.length === 0) return []
  const input = JSON.stringify({
    session_id: options.sessionId,
    transcript_path: options.transcriptPath,
    cwd: options.cwd,
    permission_mode: 'default',
    hook_event_name: event,
    tool_name: claudeName,
    tool_input: exec.arguments,
    tool_use_id: exec.callId,
    cordage_tool_name: exec.name,
    ...extra,
  })
  const env = { ...options.env(), CLAUDE_PROJECT_DIR: options.cwd }
  return Promise.all(
    matched.map(async (hook) =>
      vote(await options.runner.run(hook.command, { input, cwd: options.cwd, env, timeoutMs: hook.timeoutMs, signal: exec.signal }), hook.command),
    ),
  )
}

/** PreToolUse on `tools/pre-execute`: deny beats ask beats no objection; a hook never overrides an inner deny. */
export function createPreListener(options: ListenerOptions) {
  return async (exec: ToolExec, next: () => Promise<PreDecision>): Promise<PreDecision> => {
    const inner = await next()
    if (inner?.kind === 'deny') return inner
    const votes = await runMatching(options, 'PreToolUse', exec, {}, preVote)
    const reasons: string[] = []
    let ask: string | undefined
    for (const vote of votes) {
      if (vote.kind === 'failed') {
        options.warn(
          `PreToolUse ${vote.message}; ${options.preToolUseFailure === 'deny' ? 'denying the call (preToolUseFailure: deny)' : 'the call goes ahead (fail open)'}`,
        )
        if (options.preToolUseFailure === 'deny') reasons.push(`${vote.message}, so the call was denied`)
        continue
      }
      if (vote.context) (exec as Partial<ToolRunContext>).deferContext?.({ source: SOURCE, text: vote.context })
      if (vote.kind === 'deny') reasons.push(vote.reason)
      else if (vote.kind === 'ask') ask ??= vote.reason
    }
    if (reasons.length) return { kind: 'deny', reason: reasons.join('\n') }
    if (ask !== undefined && inner?.kind === 'allow') return { kind: 'ask', reason: ask }
    return inner
  }
}

/** PostToolUse on `tools/post-execute` for successes: block, add context, or replace the content. Fails open. */
export function createPostListener(options: ListenerOptions) {
  return async (exec: ToolExec, result: ToolExecutionResult, next: () => Promise<PostDecision>): Promise<PostDecision> => {
    const inner = await next()
    if (result.isError || inner?.kind !== 'accept') return inner
    const content = presentedContent(options, exec, result, inner)
    const votes = await runMatching(options, 'PostToolUse', exec, { tool_response: { content, text: contentText(content) } }, postVote)
    const contexts: HookContext[] = [...(inner.additionalContexts ?? [])]
    const feedback: string[] = []
    let replacement: ContentBlock[] | undefined
    for (const vote of votes) {
      if (vote.kind === 'failed') {
        options.warn(`PostToolUse ${vote.message}; the result is kept (fail open)`)
        continue
      }
      if (vote.context) contexts.push({ source: SOURCE, text: vote.context })
      if (vote.kind === 'block') feedback.push(vote.feedback)
      else if (vote.content) replacement ??= vote.content
    }
    const withContexts = contexts.length ? { additionalContexts: contexts } : {}
    if (feedback.length) return { kind: 'block', feedback: feedback.join('\n'), ...withContexts }
    if (replacement && inner.value !== undefined) {
      return {
        kind: 'block',
        feedback: 'a PostToolUse hook replaced the output of a result whose value another policy replaced; the result was withheld',
        ...withContexts,
      }
    }
    if (replacement) return { ...inner, content: replacement, ...withContexts }
    return contexts.length === (inner.additionalContexts?.length ?? 0) ? inner : { ...inner, ...withContexts }
  }
}

/** The content the model would see after inner listeners: their replacement, a re-render of their value, or the result's. */
function presentedContent(
  options: ListenerOptions,
  exec: ToolExec,
  result: ToolExecutionResult,
  inner: Extract<PostDecision, { kind: 'accept' }>,
): ContentBlock[] {
  if (inner.content) return inner.content
  if (inner.value !== undefined) {
    try {
      const definition = options.tools.get(exec.name)
      if (definition) return definition.output.render(exec.arguments, inner.value)
    } catch {
      // The registry will report the renderer failure; the hook sees the original content.
    }
  }
  return result.content
}
