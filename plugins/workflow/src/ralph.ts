import { randomUUID } from 'node:crypto'
import Schema from 'schemastery'
import {
  defineTool,
  type JsonSchemaNode,
  type JsonValue,
  type ToolDefinition,
  type ToolExecutionResult,
  type ToolRunContext,
  errorMessage,
} from '@cordage/core'
import type { ToolRegistry } from '@cordage/registry'
import type { SubagentService } from '@cordage/services'
import { WorkflowError } from './errors.js'
import type { Lifetime } from './lifetime.js'
import type { Nesting } from './nesting.js'
import { plural, resultText } from './result-text.js'
import { RunValue } from './workflow.js'

/** What `ralph` needs from its plugin. */
export interface RalphHost {
  subagents: () => SubagentService | undefined
  tools: ToolRegistry
  maxRounds: number
  nesting: Nesting
  lifetime: Lifetime
}

/** What each round reports through `structured_output`. */
export const ROUND_REPORT: JsonSchemaNode = {
  type: 'object',
  properties: {
    status: {
      enum: ['done', 'continue', 'blocked'],
      description: 'done: the task is complete; continue: more rounds are needed; blocked: you cannot proceed.',
    },
    summary: { type: 'string', description: 'What this round did and found, for the next round (it sees nothing else of yours).' },
  },
  required: ['status', 'summary'],
  additionalProperties: false,
}

interface RoundReport {
  status: 'done' | 'continue' | 'blocked'
  summary: string
}

function roundPrompt(task: string, round: number, max: number, previous: RoundReport | undefined): string {
  const before = previous ? `The previous round reported (${previous.status}):\n${previous.summary}` : 'This is the first round.'
  return `${task}\n\n---\nRound ${round} of at most ${max}. You start fresh: the workspace is the authority on what earlier rounds did. ${before}\nWork on the task, then report with structured_output: status "done" when it is complete, "continue" when another round should go on, "blocked" when you cannot proceed, and a summary for the next round.`
}

/** Runs the `until` command through the pipeline (policy applies); true when it exits 0. */
async function checkPasses(host: RalphHost, command: string, exec: ToolRunContext, signal: AbortSignal): Promise<boolean> {
  const result: ToolExecutionResult = await host.tools.execute({
    name: 'bash',
    arguments: { command },
    parent: exec.token,
    signal,
    ...(exec.agent !== undefined && { agent: exec.agent }),
  })
  if (result.isError) throw new WorkflowError('RALPH_CHECK_FAILED', `the until command could not run: ${result.error.message}`)
  const value = result.value as { kind?: string; exitCode?: number | null }
  return value.kind === 'foreground' && value.exitCode === 0
}

/** The `ralph` tool: one fresh agent per round on the same task until it reports done, a check passes or rounds run out. */
export function ralphTool(host: RalphHost): ToolDefinition {
  return defineTool({
    name: 'ralph',
    description:
      "Re-run a fresh subagent on the same task, round after round, until it reports done (or the `until` shell command exits 0, or maxRounds is reached). Each round sees only the previous round's summary and the workspace. Use it only when the user asks for an iterative loop.",
    parameters: Schema.object({
      prompt: Schema.string().required().description('The task, self-contained.'),
      until: Schema.string().description('A shell command checked after each round (through bash); exit code 0 ends the loop.'),
      maxRounds: Schema.natural().min(1).required().description('Rounds at most.'),
    }),
    output: {
      schema: RunValue,
      render(_args, value) {
        const result = value.result as { status: string; rounds: number }
        const headline =
          result.status === 'done'
            ? `ralph: the worker reported the task done after ${plural(result.rounds, 'round')}.`
            : result.status === 'until-passed'
              ? `ralph: the until check passed after ${plural(result.rounds, 'round')}.`
              : result.status === 'blocked'
                ? `ralph: the worker reported a blocker after ${plural(result.rounds, 'round')}.`
                : `ralph: reached its limit of ${plural(result.rounds, 'round')}; the worker reported work remaining.`
        return [{ type: 'text', text: `${headline}\nFinal report:\n${resultText(value.result)}` }]
      },
    },
    async execute(args, exec) {
      if (args.maxRounds > host.maxRounds)
        throw new WorkflowError('INVALID_ARGS', `maxRounds ${args.maxRounds} exceeds the configured ceiling ${host.maxRounds}`)
      const subagents = host.subagents()
      if (!subagents) throw new WorkflowError('WORKFLOW_UNAVAILABLE', 'ralph needs the subagents service: load @cordage/plugin-subagent')
      if (args.until !== undefined && !host.tools.get('bash'))
        throw new WorkflowError('WORKFLOW_UNAVAILABLE', "ralph's until check runs through the bash tool: load @cordage/plugin-shell")
      const runId = `ralph-${randomUUID().slice(0, 8)}`
      return host.lifetime.run(exec.signal, async (signal) => {
        const caller = host.nesting.callerOf(exec, 'ralph', signal)
        let report: RoundReport | undefined
        for (let round = 1; round <= args.maxRounds; round++) {
          let outcome
          try {
            outcome = await subagents.run(
              { prompt: roundPrompt(args.prompt, round, args.maxRounds, report), outputSchema: ROUND_REPORT, label: `ralph round ${round}/${args.maxRounds}` },
              caller,
            )
          } catch (error) {
            const last = report ? `; the last report was: ${JSON.stringify(report)}` : ''
            throw new WorkflowError('RALPH_ROUND_FAILED', `ralph round ${round} failed: ${errorMessage(error)}${last}`, { cause: error })
          }
          report = outcome.value as unknown as RoundReport
          const result = (status: string): JsonValue => ({ status, rounds: round, report: report as unknown as JsonValue })
          if (report.status === 'done') return { runId, agentsStarted: round, result: result('done') }
          if (report.status === 'blocked') return { runId, agentsStarted: round, result: result('blocked') }
          if (args.until !== undefined && (await checkPasses(host, args.until, exec, signal)))
            return { runId, agentsStarted: round, result: result('until-passed') }
          if (round === args.maxRounds) return { runId, agentsStarted: round, result: result('max-rounds') }
        }
        throw new WorkflowError('RALPH_ROUND_FAILED', 'ralph ran no round')
      })
    },
  })
}
